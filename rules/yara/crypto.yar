/*
 * Constants of cryptographic algorithms inside executables. Encryption is ordinary in software, so these
 * rules are informational (severity 1): in malware they point at an encrypted configuration, payload or
 * channel, or at ransomware. Metadata as in capabilities-pe.yar.
 */

private rule executable_file
{
    condition:
        uint16(0) == 0x5a4d or uint32(0) == 0x464c457f
}

rule crypto_aes_sbox
{
    meta:
        description = "Carries the AES S-box or inverse S-box: AES implemented in the program itself"
        severity = "1"
        attack = "T1573.001"
        signature = "static_crypto_constants"
    strings:
        $sbox = { 63 7C 77 7B F2 6B 6F C5 30 01 67 2B FE D7 AB 76 CA 82 C9 7D FA 59 47 F0 AD D4 A2 AF 9C A4 72 C0 }
        $inverse = { 52 09 6A D5 30 36 A5 38 BF 40 A3 9E 81 F3 D7 FB 7C E3 39 82 9B 2F FF 87 34 8E 43 44 C4 DE E9 CB }
    condition:
        executable_file and any of them
}

rule crypto_sha256_constants
{
    meta:
        description = "Carries SHA-256's round constants: SHA-256 implemented in the program itself"
        severity = "1"
        attack = ""
        signature = "static_crypto_constants"
    strings:
        $k_le = { 98 2F 8A 42 91 44 37 71 CF FB C0 B5 A5 DB B5 E9 5B C2 56 39 F1 11 F1 59 A4 82 3F 92 D5 5E 1C AB }
        $k_be = { 42 8A 2F 98 71 37 44 91 B5 C0 FB CF E9 B5 DB A5 39 56 C2 5B 59 F1 11 F1 92 3F 82 A4 AB 1C 5E D5 }
    condition:
        executable_file and any of them
}

rule crypto_chacha_salsa
{
    meta:
        description = "Carries the \"expand 32-byte k\" or \"expand 16-byte k\" constant of ChaCha and Salsa20"
        severity = "1"
        attack = "T1573.001"
        signature = "static_crypto_constants"
    strings:
        $sigma = "expand 32-byte k" ascii
        $tau = "expand 16-byte k" ascii
    condition:
        executable_file and any of them
}

rule crypto_rc4_ksa
{
    meta:
        description = "Has the shape of RC4's key schedule: a 256-entry table filled with 0..255, then a loop of 256 swaps"
        severity = "1"
        attack = "T1573.001"
        signature = "static_crypto_constants"
    strings:
        // x86-64: s[i] = i (mov byte [base + i], al/cl...; inc i; cmp i, 256; jne)
        $identity = { 88 ?? ?? [0-2] 48 83 C? 01 (48 3D | 48 81 F?) 00 01 00 00 75 }
        // the swap loop's end: inc i; cmp i, 256; jne back
        $loop = { 48 83 C? 01 48 81 F? 00 01 00 00 75 }
        // in it, key[i % length]: a division, or a multiplication by the inverse for a fixed length
        $modulo = { 48 F7 (E? | F?) }
        // and j = (j + s[i] + key byte) & 0xff: a zero extension of the low byte
        $byte = { 0F B6 (C0 | C9 | D2 | DB | F6 | FF) }
    condition:
        executable_file and
        for any i in (1..#identity) : (
            for any j in (1..#loop) : (
                @loop[j] > @identity[i] and @loop[j] - @identity[i] < 160 and
                $modulo in (@identity[i]..@loop[j]) and $byte in (@identity[i]..@loop[j])
            )
        )
}
