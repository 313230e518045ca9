#!/usr/bin/env python3
"""Benign control: a build step. Writes a small Python package, byte-compiles it with compileall and
runs its unit test (the guest has no C compiler, so the build job is Python's own)."""
import compileall
import os
import subprocess
import sys

root = '/tmp/build/mypkg'
os.makedirs(root, exist_ok=True)
with open(f'{root}/__init__.py', 'w') as out:
    out.write('')
for n in range(8):
    with open(f'{root}/mod{n}.py', 'w') as out:
        out.write(f'def value():\n    return {n}\n')
with open('/tmp/build/test_mypkg.py', 'w') as out:
    out.write('import unittest\nfrom mypkg import mod3\n\nclass T(unittest.TestCase):\n'
              '    def test_value(self):\n        self.assertEqual(mod3.value(), 3)\n\n'
              "if __name__ == '__main__':\n    unittest.main()\n")
assert compileall.compile_dir(root, quiet=1)
subprocess.run([sys.executable, '-m', 'unittest', '-q', 'test_mypkg'], cwd='/tmp/build', check=True)
