#!/usr/bin/perl
# Imitates a Perl IRC bot (the classic "ShellBot"): resolves its IRC server, registers, joins the
# control channel and announces itself, waits briefly for commands, then quits.
use strict;
use warnings;
use IO::Socket::INET;

my $irc = IO::Socket::INET->new(PeerAddr => 'irc.shellbot.test', PeerPort => 6667, Proto => 'tcp', Timeout => 10)
  or die "connect: $!";
my $nick = 'perl' . int(rand(9000) + 1000);
print $irc "NICK $nick\r\nUSER $nick 8 * :corpus shellbot\r\n";
$irc->timeout(2);
my $lines = 0;
while ($lines++ < 3 and defined(my $line = <$irc>)) {
  print $irc "PONG $1\r\n" if $line =~ /^PING (.*)/;
}
print $irc "JOIN #corpus-bots\r\nPRIVMSG #corpus-bots :ready on " . `uname -n`;
sleep 1;
print $irc "QUIT :bye\r\n";
close $irc;
