// Package socks5 is the relay's SOCKS5 proxy (RFC 1928, with RFC 1929
// username/password authentication): it lets local applications of a
// netstack relay connect into the mesh, by CONNECT and UDP ASSOCIATE,
// through the small Mesh interface the netstack implements.
package socks5
