// crash_report.h — an opt-in report of a native crash: the signal, the
// faulting address, the thread, and the native stack with each frame's module
// and offset (enough for `addr2line -e <module> <offset>`), written to stderr
// and to a file. Python's faulthandler prints only the Python frames; this
// prints the C++ ones under them. Installed by torchpool._core's
// install_crash_report (torchpool.testing.crash_report, or the environment
// variable TORCHPOOL_CRASH_REPORT at import).
//
// The handler uses only async-signal-safe calls (write, open, backtrace after
// a first call outside the handler), then hands the signal to the handler it
// replaced (faulthandler's, which adds the Python frames) or the default one,
// so the process still dies as it would have.
#pragma once

#include <csignal>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <execinfo.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace torchpool {

#if defined(__linux__)
namespace crash_detail {

inline constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
inline struct sigaction previous[sizeof(kSignals) / sizeof(kSignals[0])];
inline int report_fd = -1;

inline void put(int fd, const char* text) {
  if (fd >= 0) (void)!write(fd, text, std::strlen(text));
}

// Async-signal-safe formatting of an unsigned number.
inline void put_number(int fd, unsigned long value, int base) {
  char digits[32];
  int n = 0;
  do {
    const unsigned long digit = value % static_cast<unsigned long>(base);
    digits[n++] = static_cast<char>(digit < 10 ? '0' + digit : 'a' + digit - 10);
    value /= static_cast<unsigned long>(base);
  } while (value != 0 && n < 32);
  char text[34];
  for (int i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  text[n] = '\0';
  put(fd, text);
}

inline void report(int fd, int signal, const siginfo_t* info, void* const* frames, int count) {
  put(fd, "\n==== torchpool crash report: signal ");
  put_number(fd, static_cast<unsigned long>(signal), 10);
  put(fd, signal == SIGSEGV   ? " (SIGSEGV)"
          : signal == SIGBUS  ? " (SIGBUS)"
          : signal == SIGFPE  ? " (SIGFPE)"
          : signal == SIGILL  ? " (SIGILL)"
          : signal == SIGABRT ? " (SIGABRT)"
                              : "");
  put(fd, " at address 0x");
  put_number(fd, reinterpret_cast<unsigned long>(info != nullptr ? info->si_addr : nullptr), 16);
  put(fd, " in thread ");
  put_number(fd, static_cast<unsigned long>(syscall(SYS_gettid)), 10);
  put(fd, "\nnative stack, innermost first (module(symbol+offset) [address]):\n");
  backtrace_symbols_fd(frames, count, fd);
  put(fd, "==== end of the native stack\n");
}

inline void handle(int signal, siginfo_t* info, void* /*context*/) {
  void* frames[128];
  const int count = backtrace(frames, 128);
  report(STDERR_FILENO, signal, info, frames, count);
  if (report_fd >= 0) report(report_fd, signal, info, frames, count);
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i)
    if (kSignals[i] == signal) sigaction(signal, &previous[i], nullptr);
  raise(signal);  // the replaced handler (or the default) runs when this returns; a fault re-faults
}

}  // namespace crash_detail

// Installs the handler once per process; `path` (may be empty) also gets the report, appended.
inline void install_crash_report(const std::string& path) {
  using namespace crash_detail;
  if (!path.empty() && report_fd < 0) report_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  static bool installed = false;
  if (installed) return;
  installed = true;
  void* warm_up[2];
  backtrace(warm_up, 2);  // the first call loads the unwinder, which is not safe inside a handler
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
    struct sigaction action{};
    action.sa_sigaction = &handle;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(kSignals[i], &action, &previous[i]);
  }
}
#else
inline void install_crash_report(const std::string&) {}
#endif

}  // namespace torchpool
