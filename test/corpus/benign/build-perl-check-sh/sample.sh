#!/bin/bash
# Benign control: a Perl project's build check. Generates modules, syntax-checks each with perl -c and
# runs the test script.
src=/tmp/perlproj/lib/My
mkdir -p "$src" /tmp/perlproj/t
for name in Alpha Beta Gamma; do
  printf 'package My::%s;\nuse strict;\nsub name { return "%s" }\n1;\n' "$name" "$name" > "$src/$name.pm"
  perl -I/tmp/perlproj/lib -c "$src/$name.pm"
done
printf 'use strict;\nuse lib "/tmp/perlproj/lib";\nuse My::Beta;\nprint My::Beta::name() eq "Beta" ? "ok 1\\n" : "not ok 1\\n";\n' > /tmp/perlproj/t/basic.t
perl /tmp/perlproj/t/basic.t
