/* For the Wine tests only, never shipped: Rust's standard library (1.78 and later) takes its
 * random numbers on Windows from ProcessPrng in bcryptprimitives.dll, which Windows 10 and 11
 * have and Wine 8 does not. This DLL gives Wine one, through RtlGenRandom (advapi32's
 * SystemFunction036), which Wine has. tests/windows/run.sh builds it with mingw and puts it
 * beside the .exe files in the test's own folder. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
