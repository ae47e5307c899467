//go:build !unix

package storetest

func processCPU() int64 { return -1 }
