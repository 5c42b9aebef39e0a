package engine

// The keyword automaton over a long text, 64 chains at once with AVX-512
// (wide_amd64.go and .s; elsewhere scanWide declines and the four chains
// walk), for a rulebook whose keywords and prefixes make no union
// automaton (findLiterals).
//
// The scalar walk is one dependent table load per byte and chain, and with
// four chains it is bound by the instructions each step takes. Here each
// of four registers holds sixteen chains, and a step loads sixteen
// transitions in one gather, four times over. The chains' bytes come
// sixteen blocks of four at a time, read as 64 bytes per chain,
// transposed and mapped to their columns by one byte permute (VPERMI2B
// over the 128-entry column table) per 64 bytes (wideTranspose). The
// states with outputs are stored to a buffer (VPCOMPRESSD) that Go reads
// after the call, so a step with a hit costs a few instructions, not a
// return to Go. The chains may overlap by more than they need to, since a
// literal seen twice is only marked twice.

// wideLanes is the number of chains.
const wideLanes = 64

// wideMinLen is the shortest text walked by the wide chains. Each of them
// walks the longest literal again before its own part, so they pay only on
// texts many times wideLanes*ov long. BenchmarkKeywords on prose, against
// the four chains: 0.9x at 4 KiB, 1.3x at 6 KiB, 2.1x at 16 KiB, 3x at
// 256 KiB.
const wideMinLen = 6 << 10

// wideStride is the distance between the chains' starts in a text of n
// bytes, for literals of up to ov+1 bytes: the last chain, which walks to
// the end, then walks at most 66+ov bytes more than the others would need.
func wideStride(n, ov int) int { return (n - ov - 3) / wideLanes }
