#!/usr/bin/perl
# Benign control: a Perl text-processing job. Writes a CSV of its own, sorts and totals it, and writes a
# report file.
use strict;
use warnings;

my $data = '/tmp/inventory.csv';
open my $out, '>', $data or die;
print $out "item,qty\n";
print $out "item$_," . ($_ * 7 % 13) . "\n" for 1 .. 40;
close $out;
open my $in, '<', $data or die;
<$in>;
my %qty;
while (my $line = <$in>) {
  chomp $line;
  my ($item, $n) = split /,/, $line;
  $qty{$item} = $n;
}
close $in;
open my $report, '>', '/tmp/inventory-report.txt' or die;
printf $report "%s %d\n", $_, $qty{$_} for sort { $qty{$b} <=> $qty{$a} } keys %qty;
close $report;
print "total: ", eval { my $t = 0; $t += $_ for values %qty; $t }, "\n";
