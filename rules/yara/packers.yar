/*
 * Packers and protectors: their markers in executables. Rules with a `signature` meta feed that report
 * signature (packed_binary; see capabilities-pe.yar for the metadata). PE section names of known packers
 * are recognised by static analysis itself (src/processing/packer.ts).
 */

import "pe"

rule upx_packed
{
    meta:
        description = "Packed with UPX"
        author = "nestbox"
        severity = "2"
        attack = "T1027.002"
        signature = "packed_binary"
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

rule pe_writable_code_section
{
    meta:
        description = "Has a section that is both writable and executable, where unpacking stubs write the code they then run"
        severity = "2"
        attack = "T1027.002"
        signature = "packed_binary"
    condition:
        pe.is_pe and
        for any section in pe.sections : (
            section.characteristics & pe.SECTION_MEM_EXECUTE != 0 and section.characteristics & pe.SECTION_MEM_WRITE != 0
        )
}
