import { definePackage } from './define.js';

/** Where archives are unpacked inside the machine. */
export const UNPACK_DIR = '/tmp/unpacked';

/** Tries each password in turn; a tar inside gzip/bzip2/xz needs a second pass (7z unpacks one layer at a time). */
const UNPACK_SCRIPT = String.raw`
archive=$1; into=$2; shift 2
for password in "$@"; do
  rm -rf "$into"
  if 7z x -y -bd -p"$password" -o"$into" "$archive" >/dev/null 2>&1; then
    for inner in "$into"/*.tar; do
      [ -f "$inner" ] && 7z x -y -bd -o"$into" "$inner" >/dev/null 2>&1 && rm -f "$inner"
    done
    exit 0
  fi
done
echo "cannot unpack $archive (unsupported, damaged, or no password fits)" >&2
exit 1
`;

/**
 * Archives (zip, 7z, tar and its compressed forms, rar...): 7-Zip unpacks them inside the machine, with
 * the `password` option when given (else no password, then each configured one), and the file named by
 * the `file` option (or the first one a package recognises) is then run by its own package.
 */
export const archivePackage = definePackage({
  name: 'zip',
  aliases: ['archive', '7z', 'tar'],
  description: 'unpacks an archive and runs the file inside (option file=<name>, password=<password>)',
  fileTypes: '^(Zip|7-zip|RAR|POSIX tar|gzip|bzip2|XZ) |tar archive',
  unpack: { command: ['/bin/sh', '-c', UNPACK_SCRIPT, 'unpack', '{path}', '{into}', '{passwords}'], into: UNPACK_DIR },
});
