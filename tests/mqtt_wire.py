"""Just enough MQTT 5 over a socket to see what a broker does, byte for
byte: a CONNECT and its CONNACK's properties, SUBSCRIBE, QoS 0/1 PUBLISH."""

import socket
import struct
import time


class Client:
    """Just enough MQTT 5 over a socket to see what the broker does."""

    def __init__(self, port, client_id, host="127.0.0.1", accepted=True, version=5, auth=None):
        """A clean-start CONNECT, MQTT 5 (or 3.1.1: version=4), with no
        credentials or auth's (user, password); with accepted, asserts the
        CONNACK's reason code is 0 (else see self.connack)."""
        self.sock = socket.create_connection((host, port), timeout=5)
        self.version = version
        flags = 0x02 | (0xC0 if auth else 0)  # clean start, user name and password
        props = b"\x00" if version == 5 else b""  # MQTT 5: an empty property list
        payload = utf8(client_id) + (utf8(auth[0]) + utf8(auth[1]) if auth else b"")
        self.send(0x10, b"\x00\x04MQTT" + bytes([version, flags]) + b"\x00\x3c" + props + payload)  # keepalive 60
        kind, self.connack = self.read()
        assert kind == 0x20, (kind, self.connack)
        assert self.connack[1] == 0 or not accepted, self.connack

    def send(self, header, body):
        self.sock.sendall(bytes([header]) + varint(len(body)) + body)

    def recv(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            assert chunk, "connection closed"
            data += chunk
        return data

    def read(self):
        """(packet type, body) of the next packet."""
        header, length, shift = self.recv(1)[0], 0, 0
        while True:
            b = self.recv(1)[0]
            length |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return header & 0xF0, self.recv(length)

    def subscribe(self, topic):
        self.send(0x82, b"\x00\x01\x00" + utf8(topic) + b"\x00")  # packet id 1, no properties, QoS 0
        kind, body = self.read()
        assert kind == 0x90 and body[-1] == 0, body

    def publish_qos1(self, topic, payload, packet_id):
        self.send(0x32, utf8(topic) + struct.pack(">H", packet_id) + b"\x00" + payload)
        kind, body = self.read()
        assert kind == 0x40 and body[:2] == struct.pack(">H", packet_id), body

    def messages(self, seconds, enough=lambda got: False):
        """(topic, payload) of each QoS 0 PUBLISH received within seconds, or until enough(them)."""
        got, deadline = [], time.time() + seconds
        while (left := deadline - time.time()) > 0 and not enough(got):
            self.sock.settimeout(left)
            try:
                kind, body = self.read()
            except TimeoutError:
                break
            if kind == 0x30:
                n = struct.unpack(">H", body[:2])[0]
                props, i = read_varint(body, 2 + n)
                got.append((body[2 : 2 + n].decode(), body[i + props :]))
        return got

    def close(self):
        # MQTT 5's DISCONNECT carries a reason code; 3.1.1's is empty (RabbitMQ
        # 3.10 logs a byte more as a frame it cannot parse).
        self.send(0xE0, b"\x00" if self.version == 5 else b"")
        self.sock.close()


def utf8(s):
    return struct.pack(">H", len(s)) + s.encode()


def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def read_varint(data, i):
    value, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def connack_properties(body):
    """The fixed-size CONNACK properties: {identifier: value} (strings skipped)."""
    length, i = read_varint(body, 2)
    end, props = i + length, {}
    sizes = {0x11: 4, 0x13: 2, 0x21: 2, 0x22: 2, 0x24: 1, 0x25: 1, 0x27: 4, 0x28: 1, 0x29: 1, 0x2A: 1}
    while i < end:
        ident = body[i]
        i += 1
        if ident in sizes:
            props[ident] = int.from_bytes(body[i : i + sizes[ident]], "big")
            i += sizes[ident]
        else:  # a string, or a user property (two strings)
            for _ in range(2 if ident == 0x26 else 1):
                i += 2 + struct.unpack(">H", body[i : i + 2])[0]
    return props
