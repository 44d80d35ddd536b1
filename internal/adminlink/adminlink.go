// Package adminlink is the narrow link between package quorum and package
// admin: administration reaches a Manager's masters, scripts and clock through
// it without quorum exporting them.
//
// Package quorum sets Of in its init; package admin calls it and asserts the
// result to an interface of its own, which a test of package admin checks, so
// that a change of signature on either side fails a test rather than a run.
package adminlink

// Of returns the administration side of a *quorum.Manager (m): a value whose
// methods package admin declares in an interface. It is set by package quorum
// at init, so it is never nil once quorum is imported.
var Of func(m any) any

// Values is package quorum's codec of lock values: a value whose methods
// (Parse and Format) package admin declares in an interface and hands out as
// admin.ParseValue and admin.Value.String. It is set by package quorum at
// init, so it is never nil once quorum is imported.
var Values any
