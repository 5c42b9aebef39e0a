package firewall

import (
	"hash/maphash"
	"unsafe"
)

// The keyed hashes of the safe-text cache and the resume and trim tables.
// Each is maphash's hash of a string key, as Go's maps hash one, under a
// seed drawn at random per handler. maphash.Bytes and maphash.String feed
// the runtime's hasher 128 bytes a call, each call a setup and a
// finalization; maphash.Comparable of a string hashes it in one call, its
// long loop eight AES lanes over 128 bytes a step: on 1 KiB blocks of a
// 256 KiB body, 8.7 against 22 µs.

// hashString returns the keyed hash of s under seed.
func hashString(seed maphash.Seed, s string) uint64 { return maphash.Comparable(seed, s) }

// hashBytes returns hashString of b's bytes. The string it reads them
// through lives only for the call, which does not change them.
func hashBytes(seed maphash.Seed, b []byte) uint64 {
	return maphash.Comparable(seed, unsafe.String(unsafe.SliceData(b), len(b)))
}
