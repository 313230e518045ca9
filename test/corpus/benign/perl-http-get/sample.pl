#!/usr/bin/perl
# Benign control: a Perl script fetching a page with the core HTTP::Tiny module and saving its links.
use strict;
use warnings;
use HTTP::Tiny;

my $response = HTTP::Tiny->new(timeout => 10)->get('http://www.perl-docs.test/index.html');
die "GET failed: $response->{status}\n" unless $response->{success};
my @links = $response->{content} =~ /href="([^"]+)"/g;
open my $out, '>', '/tmp/links.txt' or die;
print $out "$_\n" for @links;
close $out;
printf "%d bytes, %d links\n", length $response->{content}, scalar @links;
