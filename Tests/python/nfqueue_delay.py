"""Delays (and optionally drops) the packets an iptables NFQUEUE rule hands it: netem's
`delay` and `loss` for a kernel built without sch_netem, run in a test host's network
namespace by netns_fixture.py.

    ip netns exec NS python3 nfqueue_delay.py --queue 0 --delay-ms 200 [--loss 0.2] [--max-seconds 60]

It binds queue QUEUE over nfnetlink (NETLINK_NETFILTER, subsystem NFNL_SUBSYS_QUEUE), asks
for each packet's metadata only, and answers each packet ACCEPT once DELAY has passed since
it arrived (DROP at once with probability LOSS), in arrival order. It prints `ready` once
bound. SIGTERM, SIGINT or MAX-SECONDS accept every packet still held and end it; the rule
should carry `--queue-bypass`, so that packets pass when nothing is bound. No dependency
beyond Python's standard library."""

import argparse
import errno
import heapq
import random
import select
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN = 1, 2, 3
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_PACKET_HDR = 1
NFQA_VERDICT_HDR = 2
NF_DROP, NF_ACCEPT = 0, 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
NLA_TYPE_MASK = 0x3FFF


def attribute(kind, payload):
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * (-length % 4)


class Queue:
    def __init__(self, number):
        self.number = number
        self.seq = 0
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE (root)
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind((0, 0))
        self._configure(attribute(NFQA_CFG_CMD, struct.pack("!BBH", NFQNL_CFG_CMD_BIND, 0, 0)))
        self._configure(attribute(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META)))
        self._configure(attribute(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", 20000)))
        self.sock.setblocking(False)

    def _message(self, kind, payload, flags):
        self.seq += 1
        body = struct.pack("!BBH", socket.AF_UNSPEC, 0, self.number) + payload
        return struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | kind, flags, self.seq, 0) + body

    def _configure(self, payload):
        self.sock.send(self._message(NFQNL_MSG_CONFIG, payload, NLM_F_REQUEST | NLM_F_ACK))
        self.sock.settimeout(5)
        data = self.sock.recv(65536)
        length, kind = struct.unpack_from("=IH", data)
        if kind == NLMSG_ERROR:
            (error,) = struct.unpack_from("=i", data, 16)
            if error != 0:
                raise OSError(-error, f"nfqueue configuration refused: {errno.errorcode.get(-error, error)}")

    def verdict(self, packet_id, verdict):
        message = self._message(NFQNL_MSG_VERDICT, attribute(NFQA_VERDICT_HDR, struct.pack("!II", verdict, packet_id)),
                                NLM_F_REQUEST)
        while True:
            try:
                self.sock.send(message)
                return
            except BlockingIOError:
                select.select([], [self.sock], [], 0.1)

    def packets(self):
        """Ids of the packets waiting in the socket now."""
        ids = []
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except BlockingIOError:
                return ids
            except OSError as e:
                if e.errno == errno.ENOBUFS:  # the kernel dropped what did not fit: as lost packets
                    continue
                raise
            offset = 0
            while offset + 16 <= len(data):
                length, kind = struct.unpack_from("=IH", data, offset)
                if length < 16:
                    break
                if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                    at = offset + 20  # after nlmsghdr and nfgenmsg
                    while at + 4 <= offset + length:
                        alen, atype = struct.unpack_from("=HH", data, at)
                        if alen < 4:
                            break
                        if atype & NLA_TYPE_MASK == NFQA_PACKET_HDR:
                            ids.append(struct.unpack_from("!I", data, at + 4)[0])
                            break
                        at += (alen + 3) & ~3
                offset += (length + 3) & ~3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queue", type=int, default=0)
    parser.add_argument("--delay-ms", type=float, default=200)
    parser.add_argument("--loss", type=float, default=0.0)
    parser.add_argument("--max-seconds", type=float, default=120)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    queue = Queue(args.queue)
    print("ready", flush=True)
    delay = args.delay_ms / 1000
    held = []  # (release time, arrival number, packet id)
    arrivals = 0
    ends = time.monotonic() + args.max_seconds
    while not stop and time.monotonic() < ends:
        now = time.monotonic()
        timeout = min(0.2, max(0.0, held[0][0] - now)) if held else 0.2
        try:
            readable, _, _ = select.select([queue.sock], [], [], timeout)
        except InterruptedError:
            continue
        now = time.monotonic()
        if readable:
            for packet_id in queue.packets():
                if args.loss and rng.random() < args.loss:
                    queue.verdict(packet_id, NF_DROP)
                else:
                    arrivals += 1
                    heapq.heappush(held, (now + delay, arrivals, packet_id))
        while held and held[0][0] <= now:
            queue.verdict(heapq.heappop(held)[2], NF_ACCEPT)
    while held:
        queue.verdict(heapq.heappop(held)[2], NF_ACCEPT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
