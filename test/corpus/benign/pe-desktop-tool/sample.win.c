/*
 * An ordinary desktop utility, the near miss of the static capability rules: it asks whether a debugger is
 * attached (as many runtimes do), reads one key's state for a hotkey, lists what starts at logon without
 * changing it, and reads its own process's memory usage. None of that is injection, keylogging, persistence or
 * debugger evasion, and no static capability signature may fire on it.
 */
#include <windows.h>
#include <stdio.h>

int main(void) {
  if (IsDebuggerPresent()) OutputDebugStringA("debug build\n");
  if (GetAsyncKeyState(VK_SHIFT) & 0x8000) puts("shift held: verbose");
  HKEY key;
  char value[256];
  DWORD size = sizeof value;
  if (RegOpenKeyExA(HKEY_CURRENT_USER, "Software\\Microsoft\\Windows\\CurrentVersion\\Run", 0, KEY_READ, &key) == ERROR_SUCCESS) {
    if (RegQueryValueExA(key, "OneDrive", NULL, NULL, (BYTE *)value, &size) == ERROR_SUCCESS) printf("starts at logon: %s\n", value);
    RegCloseKey(key);
  }
  HANDLE self = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, GetCurrentProcessId());
  MEMORY_BASIC_INFORMATION info;
  if (VirtualQueryEx(self, (void *)main, &info, sizeof info) > 0) printf("code region: %zu bytes\n", (size_t)info.RegionSize);
  CloseHandle(self);
  return 0;
}
