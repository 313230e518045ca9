#!/bin/bash
# Benign control: an application installer. Lays out /opt/mytool with its program, library and docs,
# links the program into /usr/local/bin and runs it once to print its version.
prefix=/opt/mytool
mkdir -p "$prefix/bin" "$prefix/lib" "$prefix/share/doc"
cat > "$prefix/bin/mytool" <<'TOOL'
#!/bin/sh
. /opt/mytool/lib/version.sh
echo "mytool $VERSION"
TOOL
echo 'VERSION=1.4.2' > "$prefix/lib/version.sh"
echo 'mytool: a tool that does nothing much' > "$prefix/share/doc/README"
chmod 755 "$prefix/bin/mytool"
mkdir -p /usr/local/bin
ln -sf "$prefix/bin/mytool" /usr/local/bin/mytool
/usr/local/bin/mytool
