// Preload (`node --require ./no_egress.cjs`, or NODE_OPTIONS): every outgoing TCP connection to a
// host other than loopback is refused before any packet leaves, and recorded.
//
// Every TCP client in Node (net, tls, http, https, http2, fetch/undici, axios) opens its socket
// through net.Socket.prototype.connect, so that one method is the gate. A refused connection fails
// like a closed port (ECONNREFUSED), so callers take their error path. Each attempt is appended as a
// JSON line {host, port, pid, stack} to the file named by NO_EGRESS_LOG (when set) and to stderr.
// NO_EGRESS_STRICT=1 refuses loopback as well: the guard's own test uses it to check that each client
// library goes through the gate without ever aiming at another host.
"use strict";
const fs = require("fs");
const net = require("net");

const LOG = process.env.NO_EGRESS_LOG;
const STRICT = process.env.NO_EGRESS_STRICT === "1";

function isLoopback(host) {
  const h = String(host ?? "localhost").replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1" || /^127\.\d+\.\d+\.\d+$/.test(h)
    || /^::ffff:127\.\d+\.\d+\.\d+$/.test(h);
}

function target(args) {
  // connect(options[, cb]) | connect(port[, host][, cb]) | connect(path[, cb]); http passes [options, cb] arrays too
  let a = args[0];
  if (Array.isArray(a)) a = a[0];
  if (a !== null && typeof a === "object") return { host: a.host, port: a.port, path: a.path };
  if (typeof a === "string" && !/^\d+$/.test(a)) return { path: a };
  return { port: a, host: typeof args[1] === "string" ? args[1] : undefined };
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  const t = target(args);
  if (t.path !== undefined && t.host === undefined) return connect.apply(this, args);  // a local socket file
  if (!STRICT && isLoopback(t.host)) return connect.apply(this, args);
  const record = { host: t.host ?? "localhost", port: t.port, pid: process.pid,
                   stack: new Error().stack.split("\n").slice(2, 8).map((s) => s.trim()) };
  if (LOG) fs.appendFileSync(LOG, JSON.stringify(record) + "\n");
  process.stderr.write(`no_egress: refused a connection to ${record.host}:${record.port}\n`);
  const err = Object.assign(new Error(`connect ECONNREFUSED ${record.host}:${record.port} (no_egress)`),
                            { code: "ECONNREFUSED", errno: -111, syscall: "connect", address: record.host, port: record.port });
  process.nextTick(() => this.destroy(err));
  return this;
};

module.exports = { isLoopback };
