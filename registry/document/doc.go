// Package document renders the registry's wire documents and writes
// them: the full registry kept as one piece per application (Full), the
// delta kept incrementally over the change log (Delta), and the Payload
// a read is served from, held as parts that are written one after another
// (gathered into runs, write.go) and never copied whole, with a gzip
// form made from its pieces' own compressed forms (gzip members of
// flushed deflate pieces, their CRC-32s combined, crc32combine.go).
//
// It knows Eureka's document formats (package eureka), not the registry:
// the registry's Store decides what to build and when, and keeps what
// it built (registry's payloadcache.go).
package document
