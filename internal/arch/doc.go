// Package arch holds no code: its test enforces the dependency direction described in
// docs/design.md ("Layers"), as an allow-list: every package of the module names the packages
// it may import, so a new import fails the test until its rule says it may.
package arch
