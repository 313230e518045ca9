/*
 * Capabilities of Windows executables, read from the file: the APIs a program imports or names for
 * GetProcAddress, and the constants it passes them. Each rule feeds the report signature named in its
 * `signature` meta (src/signatures/static/), with its own severity (1-5, as signature.ts defines them) and
 * ATT&CK techniques (comma-separated). API names are matched as whole words, so that OpenProcess is not
 * OpenProcessToken and a name inside a longer identifier does not count.
 */

import "pe"

rule pe_remote_thread_injection
{
    meta:
        description = "Opens another process, allocates and writes memory in it and starts a thread there"
        severity = "4"
        attack = "T1055,T1055.002"
        signature = "static_pe_injection"
    strings:
        $open = "OpenProcess" fullword ascii
        $alloc1 = "VirtualAllocEx" fullword ascii
        $alloc2 = "NtAllocateVirtualMemory" fullword ascii
        $write1 = "WriteProcessMemory" fullword ascii
        $write2 = "NtWriteVirtualMemory" fullword ascii
        $thread1 = "CreateRemoteThread" fullword ascii
        $thread2 = "CreateRemoteThreadEx" fullword ascii
        $thread3 = "NtCreateThreadEx" fullword ascii
        $thread4 = "RtlCreateUserThread" fullword ascii
    condition:
        pe.is_pe and $open and any of ($alloc*) and any of ($write*) and any of ($thread*)
}

rule pe_process_hollowing
{
    meta:
        description = "Unmaps a process's image and redirects its thread: process hollowing"
        severity = "4"
        attack = "T1055,T1055.012"
        signature = "static_pe_injection"
    strings:
        $unmap1 = "NtUnmapViewOfSection" fullword ascii
        $unmap2 = "ZwUnmapViewOfSection" fullword ascii
        $context1 = "SetThreadContext" fullword ascii
        $context2 = "Wow64SetThreadContext" fullword ascii
        $context3 = "NtSetContextThread" fullword ascii
        $resume1 = "ResumeThread" fullword ascii
        $resume2 = "NtResumeThread" fullword ascii
    condition:
        pe.is_pe and any of ($unmap*) and any of ($context*) and any of ($resume*)
}

rule pe_apc_injection
{
    meta:
        description = "Writes into a process and queues an asynchronous procedure call to run it: APC injection"
        severity = "4"
        attack = "T1055,T1055.004"
        signature = "static_pe_injection"
    strings:
        $apc1 = "QueueUserAPC" fullword ascii
        $apc2 = "NtQueueApcThread" fullword ascii
        $apc3 = "NtQueueApcThreadEx" fullword ascii
        $write1 = "WriteProcessMemory" fullword ascii
        $write2 = "NtWriteVirtualMemory" fullword ascii
    condition:
        pe.is_pe and any of ($apc*) and any of ($write*)
}

rule pe_registry_run_key
{
    meta:
        description = "Writes a value under a Run or RunOnce key, which Windows starts at every logon"
        severity = "3"
        attack = "T1547.001"
        signature = "static_persistence"
    strings:
        $run_ascii = "Software\\Microsoft\\Windows\\CurrentVersion\\Run" ascii nocase
        $run_wide = "Software\\Microsoft\\Windows\\CurrentVersion\\Run" wide nocase
        $set1 = "RegSetValueExA" fullword ascii
        $set2 = "RegSetValueExW" fullword ascii
        $set3 = "RegSetKeyValueA" fullword ascii
        $set4 = "RegSetKeyValueW" fullword ascii
        $set5 = "NtSetValueKey" fullword ascii
    condition:
        pe.is_pe and any of ($run*) and any of ($set*)
}

rule pe_service_install
{
    meta:
        description = "Creates a Windows service, which the service manager starts with the system"
        severity = "3"
        attack = "T1543.003"
        signature = "static_persistence"
    strings:
        $manager1 = "OpenSCManagerA" fullword ascii
        $manager2 = "OpenSCManagerW" fullword ascii
        $create1 = "CreateServiceA" fullword ascii
        $create2 = "CreateServiceW" fullword ascii
    condition:
        pe.is_pe and any of ($manager*) and any of ($create*)
}

rule pe_keyboard_hook
{
    meta:
        description = "Installs a low-level keyboard hook (SetWindowsHookEx with WH_KEYBOARD_LL), which sees every key typed"
        severity = "4"
        attack = "T1056.001"
        signature = "static_keylogger"
    strings:
        $hook1 = "SetWindowsHookExA" fullword ascii
        $hook2 = "SetWindowsHookExW" fullword ascii
        $next = "CallNextHookEx" fullword ascii
        // WH_KEYBOARD_LL (13) as the first argument just before an indirect call: mov ecx, 13 (x64), push 13 (x86).
        $ll_x64 = { B9 0D 00 00 00 [0-12] FF 15 }
        $ll_x86 = { 6A 0D [0-12] FF 15 }
    condition:
        pe.is_pe and any of ($hook*) and $next and any of ($ll*)
}

rule pe_key_polling
{
    meta:
        description = "Polls key states and turns them into text along with the title of the window in front: a polling keylogger"
        severity = "3"
        attack = "T1056.001"
        signature = "static_keylogger"
    strings:
        $poll = "GetAsyncKeyState" fullword ascii
        $text1 = "ToAscii" fullword ascii
        $text2 = "ToAsciiEx" fullword ascii
        $text3 = "ToUnicode" fullword ascii
        $text4 = "ToUnicodeEx" fullword ascii
        $text5 = "GetKeyNameTextA" fullword ascii
        $text6 = "GetKeyNameTextW" fullword ascii
        $window = "GetForegroundWindow" fullword ascii
        $title1 = "GetWindowTextA" fullword ascii
        $title2 = "GetWindowTextW" fullword ascii
    condition:
        pe.is_pe and $poll and any of ($text*) and $window and any of ($title*)
}

rule pe_debugger_checks
{
    meta:
        description = "Uses two or more ways of asking whether a debugger is attached"
        severity = "2"
        attack = "T1622"
        signature = "static_antidebug"
    strings:
        // IsDebuggerPresent alone is in most programs built with Visual C++'s runtime: it needs a second check.
        $check1 = "IsDebuggerPresent" fullword ascii
        $check2 = "CheckRemoteDebuggerPresent" fullword ascii
        $check3 = "NtQueryInformationProcess" fullword ascii
        $check4 = "ZwQueryInformationProcess" fullword ascii
        $check5 = "NtSetInformationThread" fullword ascii
        $check6 = "ZwSetInformationThread" fullword ascii
        $check7 = "DbgUiRemoteBreakin" fullword ascii
        $tool1 = "OLLYDBG" ascii wide nocase fullword
        $tool2 = "x64dbg" ascii wide nocase fullword
        $tool3 = "WinDbgFrameClass" ascii wide
    condition:
        pe.is_pe and 2 of them
}

rule pe_http_client
{
    meta:
        description = "Uses the WinINet or WinHTTP client APIs to fetch or send data over HTTP"
        severity = "1"
        attack = "T1071.001"
        signature = "static_network_apis"
    strings:
        $inet_open1 = "InternetOpenA" fullword ascii
        $inet_open2 = "InternetOpenW" fullword ascii
        $inet_use1 = /(InternetOpenUrl|InternetConnect|HttpOpenRequest|HttpSendRequest)[AW]\x00/
        $inet_use2 = "InternetReadFile" fullword ascii
        $http_open = "WinHttpOpen" fullword ascii
        $http_use1 = "WinHttpConnect" fullword ascii
        $http_use2 = "WinHttpSendRequest" fullword ascii
        $http_use3 = "WinHttpReadData" fullword ascii
    condition:
        pe.is_pe and ((any of ($inet_open*) and any of ($inet_use*)) or ($http_open and any of ($http_use*)))
}

rule pe_socket_client
{
    meta:
        description = "Connects Winsock sockets to addresses it resolves or has built in"
        severity = "1"
        attack = "T1095"
        signature = "static_network_apis"
    strings:
        $winsock = "ws2_32.dll" ascii wide nocase
        $socket1 = "socket" fullword ascii
        $socket2 = "WSASocketA" fullword ascii
        $socket3 = "WSASocketW" fullword ascii
        $connect1 = "connect" fullword ascii
        $connect2 = "WSAConnect" fullword ascii
        $address1 = "inet_addr" fullword ascii
        $address2 = "inet_pton" fullword ascii
        $address3 = "gethostbyname" fullword ascii
        $address4 = "getaddrinfo" fullword ascii
    condition:
        pe.is_pe and (
            (pe.imports("ws2_32.dll", "connect") or pe.imports("ws2_32.dll", 4)) or
            ($winsock and any of ($socket*) and any of ($connect*) and any of ($address*))
        )
}

rule pe_download_to_file
{
    meta:
        description = "Downloads a URL straight into a file (URLDownloadToFile)"
        severity = "2"
        attack = "T1105"
        signature = "static_network_apis"
    strings:
        $download1 = "URLDownloadToFileA" fullword ascii
        $download2 = "URLDownloadToFileW" fullword ascii
        $download3 = "URLDownloadToCacheFileA" fullword ascii
        $download4 = "URLDownloadToCacheFileW" fullword ascii
    condition:
        pe.is_pe and any of them
}

rule pe_download_execute
{
    meta:
        description = "Downloads a URL into a file and can start programs with WinExec or ShellExecute: a downloader"
        severity = "3"
        attack = "T1105,T1106"
        signature = "static_network_apis"
    strings:
        $download1 = "URLDownloadToFileA" fullword ascii
        $download2 = "URLDownloadToFileW" fullword ascii
        $run1 = "WinExec" fullword ascii
        $run2 = "ShellExecuteA" fullword ascii
        $run3 = "ShellExecuteW" fullword ascii
        $run4 = "ShellExecuteExA" fullword ascii
        $run5 = "ShellExecuteExW" fullword ascii
    condition:
        pe.is_pe and any of ($download*) and any of ($run*)
}
