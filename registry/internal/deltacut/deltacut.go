// Package deltacut holds how registry/document cuts the delta into
// pieces, and from what size it makes an application's pieces one run.
// It stands apart so that the registry's tests, which compare the
// documents assembled from pieces with those written whole, can cut them
// finer than a registry does.
package deltacut

// ChunkSize is how many instances a chunk of the delta holds at most: a
// change re-copies and re-compresses its chunk, not its application.
var ChunkSize = 64

// FoldBatch is how many changes a fold encodes before it seals the
// chunks they went into.
var FoldBatch = 16384

// FlattenFrom is how many deflated bytes an application's entry holds
// before its pieces are made one run, in the delta and in the full
// registry extended by runs: registry/document's bigPart, from which a
// part is written as it is.
var FlattenFrom = 32 << 10
