/*
 * Imitates a process injector: the Windows calls a loader makes to put code into another process and run it
 * there (remote thread, hollowing, APC), with debugger checks first, and keeps a stub of code in a section that
 * is writable as well as executable, as packers' unpacking stubs are. Harmless: every target is this process
 * itself, the "payload" is one return instruction, and nothing past the argument check runs unless the program
 * is given 9 or more arguments, which nobody does. The rules that find it read the file, not its behaviour.
 */
#include <windows.h>
#include <stdio.h>

typedef LONG(WINAPI *unmap_fn)(HANDLE, PVOID);

static const unsigned char payload[] = {0xc3};

/* The "unpacking stub": a section flagged writable and executable ("xw"), holding a function that returns 0. */
int unpack_stub(void);
__asm__(".section .stub,\"xw\"\n.globl unpack_stub\nunpack_stub:\n xor %eax, %eax\n ret\n.text\n");

static int debugged(void) {
  BOOL remote = FALSE;
  CheckRemoteDebuggerPresent(GetCurrentProcess(), &remote);
  return IsDebuggerPresent() || remote;
}

/* The classic four calls: open the target, allocate in it, write to it, start a thread there. */
static void remote_thread(DWORD pid) {
  HANDLE process = OpenProcess(PROCESS_ALL_ACCESS, FALSE, pid);
  void *remote = VirtualAllocEx(process, NULL, sizeof payload, MEM_COMMIT | MEM_RESERVE, PAGE_EXECUTE_READWRITE);
  SIZE_T written = 0;
  WriteProcessMemory(process, remote, payload, sizeof payload, &written);
  HANDLE thread = CreateRemoteThread(process, NULL, 0, (LPTHREAD_START_ROUTINE)remote, NULL, 0, NULL);
  WaitForSingleObject(thread, 1000);
}

/* Hollowing: unmap a suspended process's image, write another, point its thread at it. */
static void hollow(HANDLE process, HANDLE thread) {
  unmap_fn unmap = (unmap_fn)GetProcAddress(GetModuleHandleA("ntdll.dll"), "NtUnmapViewOfSection");
  if (unmap) unmap(process, (PVOID)0x7ffe0000);
  CONTEXT context = {.ContextFlags = CONTEXT_FULL};
  GetThreadContext(thread, &context);
  SetThreadContext(thread, &context);
  ResumeThread(thread);
}

static void CALLBACK nothing(ULONG_PTR unused) { (void)unused; }

int main(int argc, char **argv) {
  (void)argv;
  if (argc < 9) return 0;
  if (debugged() || unpack_stub() != 0) return 1;
  remote_thread(GetCurrentProcessId());
  hollow(GetCurrentProcess(), GetCurrentThread());
  QueueUserAPC(nothing, GetCurrentThread(), 0);
  SleepEx(0, TRUE);
  puts("done");
  return 0;
}
