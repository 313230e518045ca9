/*
 * Capabilities of x86-64 Linux executables, read from the file. A ptrace request is recognised by the call it
 * is passed to: the request in edi (mov edi, N or xor edi, edi) shortly before a call whose target is the
 * `ptrace` symbol, just after eax is cleared (ptrace is variadic, so al holds the count of vector arguments). That needs the symbol table, which static and unstripped programs keep; stripped or
 * dynamically linked programs (calls through the PLT) are not judged by those rules. Metadata as in
 * capabilities-pe.yar.
 */

import "elf"

private rule elf_file
{
    condition:
        uint32(0) == 0x464c457f
}

rule elf_ptrace_traceme
{
    meta:
        description = "Calls ptrace(PTRACE_TRACEME), which fails when a debugger or tracer is attached"
        severity = "2"
        attack = "T1622"
        signature = "static_antidebug"
    strings:
        $traceme = { (BF 00 00 00 00 | 31 FF) [0-8] (B8 00 00 00 00 | 31 C0) E8 }
    condition:
        elf_file and
        for any i in (0..elf.symtab_entries - 1) : (
            elf.symtab[i].name == "ptrace" and
            for any s in (0..elf.number_of_segments - 1) : (
                elf.segments[s].type == elf.PT_LOAD and
                elf.symtab[i].value >= elf.segments[s].virtual_address and
                elf.symtab[i].value < elf.segments[s].virtual_address + elf.segments[s].file_size and
                for any j in (1..#traceme) : (
                    @traceme[j] + !traceme[j] + 4 + int32(@traceme[j] + !traceme[j]) ==
                        elf.symtab[i].value - elf.segments[s].virtual_address + elf.segments[s].offset
                )
            )
        )
}

rule elf_ptrace_injection
{
    meta:
        description = "Attaches to a process with ptrace, writes into its memory and sets its registers: ptrace injection"
        severity = "4"
        attack = "T1055,T1055.008"
        signature = "static_elf_injection"
    strings:
        $attach = { (BF 10 00 00 00 | BF 06 42 00 00) [0-8] (B8 00 00 00 00 | 31 C0) E8 }
        $poke = { BF (04 | 05) 00 00 00 [0-8] (B8 00 00 00 00 | 31 C0) E8 }
        $setregs = { BF 0D 00 00 00 [0-8] (B8 00 00 00 00 | 31 C0) E8 }
    condition:
        elf_file and
        for any i in (0..elf.symtab_entries - 1) : (
            elf.symtab[i].name == "ptrace" and
            for any s in (0..elf.number_of_segments - 1) : (
                elf.segments[s].type == elf.PT_LOAD and
                elf.symtab[i].value >= elf.segments[s].virtual_address and
                elf.symtab[i].value < elf.segments[s].virtual_address + elf.segments[s].file_size and
                for any j in (1..#attach) : (
                    @attach[j] + !attach[j] + 4 + int32(@attach[j] + !attach[j]) ==
                        elf.symtab[i].value - elf.segments[s].virtual_address + elf.segments[s].offset
                ) and
                for any j in (1..#poke) : (
                    @poke[j] + !poke[j] + 4 + int32(@poke[j] + !poke[j]) ==
                        elf.symtab[i].value - elf.segments[s].virtual_address + elf.segments[s].offset
                ) and
                for any j in (1..#setregs) : (
                    @setregs[j] + !setregs[j] + 4 + int32(@setregs[j] + !setregs[j]) ==
                        elf.symtab[i].value - elf.segments[s].virtual_address + elf.segments[s].offset
                )
            )
        )
}

rule elf_hardcoded_connect
{
    meta:
        description = "Links socket and connect and carries a public IPv4 address as a string: it connects to a built-in address"
        severity = "1"
        attack = "T1095"
        signature = "static_network_apis"
    strings:
        // A whole C string holding a dotted IPv4 address of the public unicast space. Left out: 0-2.x (1.x
        // and 2.x look like the OIDs of X.509 code), 10.x, 127.x, 172.x, 192.168.x and 224.x and above.
        $address = /\x00(([3-9]|1[1-9]|[2-9][0-9]|1[01][0-9]|12[0-6]|12[89]|1[3-6][0-9]|17[013-9]|18[0-9]|19[013-9]|2[01][0-9]|22[0-3])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}|192\.([0-9]|[1-9][0-9]|1[0-5][0-9]|16[0-79]|1[7-9][0-9]|2[0-4][0-9]|25[0-5])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){2})\x00/
    condition:
        elf_file and $address and
        (
            (
                for any i in (0..elf.symtab_entries - 1) : (elf.symtab[i].name == "connect") and
                for any i in (0..elf.symtab_entries - 1) : (elf.symtab[i].name == "socket")
            ) or (
                for any i in (0..elf.dynsym_entries - 1) : (elf.dynsym[i].name == "connect") and
                for any i in (0..elf.dynsym_entries - 1) : (elf.dynsym[i].name == "socket")
            )
        )
}
