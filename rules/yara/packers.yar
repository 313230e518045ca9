/* Packers and protectors: their markers in executables. */

rule upx_packed
{
    meta:
        description = "Packed with UPX"
        author = "nestbox"
        severity = "2"
    strings:
        $magic = "UPX!"
        $info = "This file is packed with the UPX executable packer"
        $s0 = "UPX0"
        $s1 = "UPX1"
    condition:
        (uint16(0) == 0x5a4d or uint32(0) == 0x464c457f) and ($info or ($magic and ($s0 or $s1)) or #magic >= 2)
}

rule embedded_pe
{
    meta:
        description = "Contains a second Windows executable after its start"
        author = "nestbox"
        severity = "2"
    strings:
        $dos = "This program cannot be run in DOS mode"
    condition:
        for any i in (1..#dos) : (@dos[i] > 0x200)
}
