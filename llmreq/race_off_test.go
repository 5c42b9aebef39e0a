//go:build !race

package llmreq

const raceEnabled = false
