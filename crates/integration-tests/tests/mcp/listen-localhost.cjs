// A `node --require` preload for test servers: a listen() that names no host (which would bind
// every interface) binds the loopback address 127.0.0.1 instead. Explicit hosts, unix sockets
// and handles are left alone.
'use strict';
const dns = require('dns');
const net = require('net');

const LOOPBACK = '127.0.0.1';

// A listen() without a host binds at once, and code may read server.address() right after it
// (the conformance harness does). With a host, node first resolves it with dns.lookup, whose
// callback comes later; answering for our literal address at once keeps the binding synchronous.
const lookup = dns.lookup;
dns.lookup = function (hostname, options, callback) {
  const cb = typeof options === 'function' ? options : callback;
  if (hostname !== LOOPBACK || typeof cb !== 'function') {
    return lookup.apply(this, arguments);
  }
  if (options !== null && typeof options === 'object' && options.all === true) {
    cb(null, [{ address: LOOPBACK, family: 4 }]);
  } else {
    cb(null, LOOPBACK, 4);
  }
  return {};
};

function isPort(value) {
  return typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value));
}

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (args.length === 0 || typeof first === 'function') {
    // listen() / listen(callback): a random port.
    args = [0, LOOPBACK, ...args];
  } else if (isPort(first)) {
    // listen(port[, host][, backlog][, callback])
    if (typeof args[1] !== 'string') {
      args = [first, LOOPBACK, ...args.slice(1)];
    }
  } else if (first && typeof first === 'object' && !Array.isArray(first)) {
    // listen({port, host, ...}[, callback]); handles, fds and paths are not network listens.
    const isNetwork = first.path === undefined && first.fd === undefined && first.handle === undefined
      && first._handle === undefined && !(first instanceof net.Server);
    if (isNetwork && first.host === undefined) {
      args = [{ ...first, host: LOOPBACK }, ...args.slice(1)];
    }
  }
  return listen.apply(this, args);
};
