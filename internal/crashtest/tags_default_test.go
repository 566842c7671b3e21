//go:build unix && !wend_portable

package crashtest

// extraTags adds nothing: the wend under test is built for this OS's own paths.
const extraTags = ""
