# Raw system calls for the escape battery (x86_64), run inside the sandbox:
#   python3 -c "$(cat sc.py)" CHECK[:ARG[:ARG]]...
# prints one line per check: `CHECK[:ARGS]: OK [detail]` when the call succeeded, or
# `CHECK[:ARGS]: ENAME (strerror)` when it failed (ARGS: comma-separated). Some checks (pivot_root, mount, umount) change
# the mount namespace they run in: never run this on the host outside a namespace.
import ctypes
import errno
import fcntl
import mmap
import os
import socket
import struct
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
AT_FDCWD = -100


def sys_(nr, *args):
    conv = []
    for a in args:
        if isinstance(a, int):
            conv.append(ctypes.c_long(a))
        elif isinstance(a, str):
            conv.append(a.encode())
        else:
            conv.append(a)
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *conv)
    if r == -1:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def buf(n):
    return ctypes.create_string_buffer(n)


class IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def check_clone3():
    return sys_(435, None, 0)


UNSHARE = {"user": 0x10000000, "mount": 0x00020000, "net": 0x40000000, "ipc": 0x08000000,
           "uts": 0x04000000, "pid": 0x20000000, "cgroup": 0x02000000, "time": 0x00000080}


def check_unshare(kind):
    return sys_(272, UNSHARE[kind])


def check_setns(kind="mnt"):
    fd = os.open("/proc/self/ns/" + kind, os.O_RDONLY)
    return sys_(308, fd, 0)


def check_mount(target):
    return sys_(165, "none", target, "tmpfs", 0, None)


def check_bind(source, target):
    return sys_(165, source, target, None, 0x1000, None)  # MS_BIND


def check_remount_rw(target):
    return sys_(165, None, target, None, 0x20 | 0x1000, None)  # MS_REMOUNT|MS_BIND, no MS_RDONLY


def check_umount(target):
    return sys_(166, target, 2)  # MNT_DETACH


def check_pivot_root():
    return sys_(155, ".", ".")


def check_chroot(path="/tmp"):
    return sys_(161, path)


def check_fsopen():
    return sys_(430, "tmpfs", 0)


def check_open_tree(path="/"):
    return sys_(428, AT_FDCWD, path, 1)  # OPEN_TREE_CLONE


def check_mount_setattr(path="/"):
    attr = struct.pack("QQQQ", 0, 1, 0, 0)  # attr_clr = MOUNT_ATTR_RDONLY
    return sys_(442, AT_FDCWD, path, 0, attr, len(attr))


def check_move_mount(src, dst):
    return sys_(429, AT_FDCWD, src, AT_FDCWD, dst, 0)


def check_io_uring_setup():
    return sys_(425, 4, buf(120))


def check_io_uring_enter():
    return sys_(426, 0, 0, 0, 0, None, 0)


def check_io_uring_register():
    return sys_(427, 0, 0, None, 0)


def check_keyctl():
    return sys_(250, 0, -3, 0)  # KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING


def check_add_key():
    return sys_(248, "user", "pi-escape", b"x", 1, -2)  # KEY_SPEC_PROCESS_KEYRING


def check_request_key():
    return sys_(249, "user", "pi-escape-none", None, 0)


def check_bpf():
    attr = struct.pack("IIII", 2, 4, 4, 1) + bytes(112)  # BPF_MAP_TYPE_ARRAY, 4, 4, 1 entry
    return sys_(321, 0, attr, len(attr))  # BPF_MAP_CREATE


def check_perf_event_open():
    # type SOFTWARE, size 128, config CPU_CLOCK, flags: disabled|exclude_kernel|exclude_hv
    attr = struct.pack("IIQQQQ", 1, 128, 0, 0, 0, 1 | (1 << 5) | (1 << 6)) + bytes(88)
    return sys_(298, attr, 0, -1, -1, 0)


def check_userfaultfd():
    return sys_(323, 1 | os.O_CLOEXEC)  # UFFD_USER_MODE_ONLY


def check_ptrace_attach(pid):
    r = sys_(101, 16, int(pid), 0, 0)  # PTRACE_ATTACH
    os.waitpid(int(pid), 0x40000000)  # __WALL
    sys_(101, 17, int(pid), 0, 0)  # PTRACE_DETACH
    return r


def check_ptrace_seize(pid):
    r = sys_(101, 0x4206, int(pid), 0, 0)
    sys_(101, 17, int(pid), 0, 0)
    return r


def vm_rw(nr, pid, addr):
    local = buf(16)
    liov = IOVec(ctypes.cast(local, ctypes.c_void_p), 16)
    riov = IOVec(int(addr, 0), 16)
    return sys_(nr, int(pid), ctypes.byref(liov), 1, ctypes.byref(riov), 1, 0)


def check_vm_readv(pid, addr="0x400000"):
    return vm_rw(310, pid, addr)


def check_vm_writev(pid, addr="0x400000"):
    return vm_rw(311, pid, addr)


def check_mem_open(pid):
    return os.open("/proc/%s/mem" % pid, os.O_RDWR)


def check_open_write(path):
    fd = os.open(path, os.O_WRONLY)  # opens only: never writes
    os.close(fd)


def check_name_handle(path):
    h = buf(8 + 128)
    struct.pack_into("I", h, 0, 128)
    mount_id = ctypes.c_int()
    sys_(303, AT_FDCWD, path, h, ctypes.byref(mount_id), 0)
    size, = struct.unpack_from("I", h, 0)
    return h.raw[:8 + size].hex()


def check_open_handle(hexhandle):
    h = bytes.fromhex(hexhandle)
    mfd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    fd = sys_(304, mfd, h, os.O_RDONLY)
    return os.read(fd, 200).decode(errors="replace").replace("\n", " | ")


def check_mknod(path):
    os.mknod(path, 0o20600, os.makedev(1, 3))


def check_chmod(path, mode):
    os.chmod(path, int(mode, 8))


def check_fchmod(path, mode):
    fd = os.open(path, os.O_RDONLY)
    os.fchmod(fd, int(mode, 8))


def check_fchmodat2(path, mode):
    return sys_(452, AT_FDCWD, path, int(mode, 8), 0)


def check_create(path, mode):
    """open(O_CREAT) as libc makes it (openat)."""
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, int(mode, 8)))


def check_creat(path, mode):
    return sys_(85, path, int(mode, 8))


def check_openat(path, mode):
    return sys_(257, AT_FDCWD, path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, int(mode, 8))


def check_tmpfile(path, mode):
    """A nameless file of MODE in PATH's directory (O_TMPFILE), then linked at PATH."""
    fd = os.open(os.path.dirname(path), os.O_TMPFILE | os.O_WRONLY, int(mode, 8))
    # linkat(..., AT_SYMLINK_FOLLOW)
    return sys_(265, AT_FDCWD, "/proc/self/fd/%d" % fd, AT_FDCWD, path, 0x400)


def check_mknodreg(path, mode):
    os.mknod(path, 0o100000 | int(mode, 8))


def check_openat2(path, mode):
    how = struct.pack("QQQ", os.O_CREAT | os.O_WRONLY, int(mode, 8), 0)  # struct open_how
    return sys_(437, AT_FDCWD, path, how, len(how))


def check_x32():
    return sys_(0x40000000 | 39)  # x32 getpid


def check_int80():
    # mov eax, 20 (i386 getpid); int 0x80; ret
    code = b"\xb8\x14\x00\x00\x00\xcd\x80\xc3"
    m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(code)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    return ctypes.CFUNCTYPE(ctypes.c_int)(addr)()


def check_isatty(fd="0"):
    return os.isatty(int(fd))


def check_tiocsti_tty():
    import termios
    fd = os.open("/dev/tty", os.O_RDWR)
    fcntl.ioctl(fd, termios.TIOCSTI, b"#")


def check_tiocsti():
    import termios
    fcntl.ioctl(0, termios.TIOCSTI, b"#")


def check_tioclinux():
    fcntl.ioctl(0, 0x541C, bytes([7]))  # TIOCLINUX, TIOCL_GETMOUSEREPORTING


FAMILIES = {
    "unix": (socket.AF_UNIX, socket.SOCK_STREAM, 0),
    "unix-dgram": (socket.AF_UNIX, socket.SOCK_DGRAM, 0),
    "vsock": (40, socket.SOCK_STREAM, 0),
    "packet": (17, socket.SOCK_RAW, 0x0300),
    "packet-dgram": (17, socket.SOCK_DGRAM, 0x0300),
    "raw4": (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
    "raw6": (socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6),
    "rawtcp": (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP),
}


def check_socket(name):
    f, t, p = FAMILIES[name]
    s = socket.socket(f, t, p)
    s.close()


def check_socketpair():
    a, b = socket.socketpair()
    a.send(b"x")
    return b.recv(1)


def check_connect(host, port):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect((host, int(port)))
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    return s.recv(100)


def check_udp(host, port):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_DGRAM)
    return s.sendto(b"pi-escape", (host, int(port)))


def check_unixconnect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect(path)
    return "connected"


def check_dgramsend(path):
    """A datagram to the socket file at PATH, from a socket and from a socketpair."""
    sent = []
    errors = []
    # SOCK_RAW: the kernel makes it a datagram socket on AF_UNIX.
    for kind in (socket.SOCK_DGRAM, socket.SOCK_RAW):
        for make in (lambda: socket.socketpair(socket.AF_UNIX, kind)[0],
                     lambda: socket.socket(socket.AF_UNIX, kind)):
            try:
                sent.append(make().sendto(b"pi-escape", path))
            except OSError as e:
                errors.append(e)
    if errors and not sent:
        raise errors[0]
    return "sent %r" % sent


def check_connectrace(own, host, rounds="300"):
    """connect() to OWN (a socket of the sandbox) while another thread keeps rewriting the
    address buffer to HOST; OK when no round reached HOST (the result says how many did)."""
    import threading
    libc.connect.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint]
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(own)
    srv.listen(1024)
    srv.setblocking(False)
    own_b, host_b = own.encode(), host.encode()
    size = 2 + 108
    addr = ctypes.create_string_buffer(size)
    stop = []
    def flip():
        while not stop:
            ctypes.memmove(ctypes.addressof(addr) + 2, host_b + b"\0", len(host_b) + 1)
            ctypes.memmove(ctypes.addressof(addr) + 2, own_b + b"\0", len(own_b) + 1)
    struct.pack_into("H", addr, 0, socket.AF_UNIX)
    ctypes.memmove(ctypes.addressof(addr) + 2, own_b + b"\0", len(own_b) + 1)
    t = threading.Thread(target=flip)
    t.start()
    reached_own = 0
    try:
        for _ in range(int(rounds)):
            c = socket.socket(socket.AF_UNIX)
            if libc.connect(c.fileno(), ctypes.addressof(addr), size) == 0:
                try:
                    srv.accept()[0].close()
                    reached_own += 1
                except BlockingIOError:
                    pass
            c.close()
    finally:
        stop.append(1)
        t.join()
    return "own %d" % reached_own


def check_abstract(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0" + name)


def check_nnp_undo():
    libc.prctl.restype = ctypes.c_int
    ctypes.set_errno(0)
    r = libc.prctl(38, 0, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS 0
    err = ctypes.get_errno()
    now = libc.prctl(39, 0, 0, 0, 0)
    if r == -1:
        raise OSError(err, os.strerror(err) + ", no_new_privs still %d" % now)
    return "no_new_privs now %d" % now


def check_capset(cap="21"):
    hdr = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    bit = 1 << int(cap)  # CAP_SYS_ADMIN by default
    data = struct.pack("IIIIII", bit, bit, bit, 0, 0, 0)
    return sys_(126, hdr, data)


def check_setuid(uid="0"):
    os.setuid(int(uid))


def check_kill(pid, sig="0"):
    os.kill(int(pid), int(sig))


def check_personality(value="0x0400000"):
    return sys_(135, int(value, 0))


for spec in sys.argv[1:]:
    name, *args = spec.split(":", 1)
    args = args[0].split(",") if args else []
    fn = globals()["check_" + name.replace("-", "_")]
    try:
        r = fn(*args)
        print("%s: OK%s" % (spec, "" if r is None else " " + str(r)), flush=True)
    except OSError as e:
        en = errno.errorcode.get(e.errno, str(e.errno)) if e.errno else "?"
        print("%s: %s (%s)" % (spec, en, e.strerror), flush=True)
