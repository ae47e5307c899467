package main

import "net"

// listen opens a free loopback port for the recording proxy.
func listen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
