// Package arch holds no code: its test enforces the dependency direction described in
// docs/design.md ("Layers"), as an allow-list: every package of the module and of the Go plugin
// SDK's module names the packages it may import, so a new import fails the test until its rule
// says it may. Its other tests hold what the repository promises its users about modules: the
// SDK's go.sum holds none of wend's own dependencies, pre-commit installs wend alone, and a
// release pins the SDK instead of replacing it (docs/design.md, "Releasing").
package arch
