// pi-sandbox-deny-userns PROGRAM [ARG...]: runs PROGRAM where no user namespace can be made, as
// under Docker's default seccomp profile (profiles/seccomp/default.json of moby: clone and
// unshare with CLONE_NEWUSER fail with EPERM, clone3 with ENOSYS so that libc falls back to
// clone). The tests of the weaker sandbox (docs/security.md, "Where namespaces cannot be made")
// and `tests/escape/run --weak` run pi-sandbox through it. Exit 125 when the filter cannot be
// loaded, 127 when PROGRAM cannot be run.
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROGRAM [ARG...]\n", argv[0]);
    return 2;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  const scmp_arg_cmp user_ns = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
  if (ctx == nullptr || ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, user_ns) != 0 ||
      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1, user_ns) != 0 ||
      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) != 0 ||
      seccomp_load(ctx) != 0) {
    std::fprintf(stderr, "pi-sandbox-deny-userns: cannot load the seccomp filter\n");
    return 125;
  }
  seccomp_release(ctx);
  ::execvp(argv[1], argv + 1);
  std::fprintf(stderr, "pi-sandbox-deny-userns: %s: %s\n", argv[1], std::strerror(errno));
  return 127;
}
