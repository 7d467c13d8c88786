"""A command run where nothing can leave: a fresh network namespace that has only loopback,
with every connection attempt of every process it starts traced by strace (Python's, vLLM's,
Ray's C++ daemons' alike). ``outbound`` reads back the attempts to any other address."""

import ipaddress
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

# The calls that name a peer: a TCP or UDP connect, and a datagram sent to an address.
TRACED_CALLS = "connect,sendto,sendmsg,sendmmsg"
_IPV4 = re.compile(r'inet_addr\("([^"]+)"\)')
_IPV6 = re.compile(r'inet_pton\(AF_INET6, "([^"]+)"')

# A new namespace's loopback is down: bring it up (SIOCGIFFLAGS, then SIOCSIFFLAGS with IFF_UP)
# without depending on iproute2.
_LOOPBACK_UP = (
    "import fcntl, socket, struct; s = socket.socket(); "
    "req = struct.pack('16sH22x', b'lo', 0); "
    "flags = struct.unpack('16sH22x', fcntl.ioctl(s, 0x8913, req))[1]; "
    "fcntl.ioctl(s, 0x8914, struct.pack('16sH22x', b'lo', flags | 1))"
)


def unavailable() -> str | None:
    """Why commands cannot be cut off here (a reason to skip), or None."""
    for tool in ("unshare", "strace"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (scripts/setup.sh installs strace where apt can)"
    probe = subprocess.run(
        ["unshare", "--net", "--map-root-user", "true"], capture_output=True, text=True, timeout=30
    )
    if probe.returncode != 0:
        return f"no network namespace for this user here: {probe.stderr.strip()}"
    return None


def cut_off(command: Sequence[str], trace: Path) -> list[str]:
    """``command`` inside a new network namespace with only loopback (up), traced into
    ``trace``: the argv to run."""
    strace = f'exec strace -f --seccomp-bpf -qq -e trace={TRACED_CALLS} -o "$1" "${{@:2}}"'
    script = f'"{sys.executable}" -c "$0" && {strace}'
    return ["unshare", "--net", "--map-root-user", "bash", "-c", script, _LOOPBACK_UP, str(trace), *command]


def run_cut_off(
    command: Sequence[str], trace: Path, timeout: float, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` cut off (see ``cut_off``) and wait for it."""
    return subprocess.run(
        cut_off(command, trace), capture_output=True, text=True, timeout=timeout, cwd=cwd, env=os.environ
    )


def outbound(trace: Path) -> list[str]:
    """The traced lines that name an address other than loopback (or the unspecified one,
    which means this machine), as strace wrote them."""
    return [line for line in trace.read_text().splitlines() if _leaves(line)]


def loopback_calls(trace: Path) -> int:
    """How many traced calls named a loopback address: shows the trace followed processes
    that talk to each other."""
    return sum(1 for line in trace.read_text().splitlines() if _addresses(line) and not _leaves(line))


def _leaves(line: str) -> bool:
    """Whether a traced call names an address beyond this machine."""
    return any(not (a.is_loopback or a.is_unspecified) for a in _addresses(line))


def _addresses(line: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    found = []
    for text in _IPV4.findall(line) + _IPV6.findall(line):
        address = ipaddress.ip_address(text)
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped  # ::ffff:127.0.0.1 is loopback
        found.append(address)
    return found
