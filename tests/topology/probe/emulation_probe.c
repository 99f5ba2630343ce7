/* Prints what a process sees of its machine, for tests/topology/emulation_qemu_test.cc:
 * "uname <machine>" on the first line, then /proc/cpuinfo as the kernel (or an
 * emulator) shows it. Built static for arm64 and run under qemu-aarch64-static, it shows
 * what qemu-user really gives a guest binary. Plain C: it needs no arm64 libraries. */
#include <stdio.h>
#include <sys/utsname.h>

int main(void) {
  struct utsname uts;
  if (uname(&uts) != 0) return 1;
  printf("uname %s\n", uts.machine);
  FILE* in = fopen("/proc/cpuinfo", "r");
  if (in == NULL) return 0;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, in)) > 0) fwrite(buffer, 1, n, stdout);
  fclose(in);
  return 0;
}
