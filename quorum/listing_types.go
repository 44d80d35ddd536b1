package quorum

import "github.com/redlock/redlock/internal/listing"

// The listing this package builds (inspect.go, scan.go) has the shape of
// internal/listing; package admin hands it out as admin.Listing and documents
// it. These are its names here.
type (
	lockState    = listing.State
	masterView   = listing.MasterView
	lockInfo     = listing.LockInfo[Owner]
	masterAnswer = listing.MasterAnswer
	lockListing  = listing.Listing[Owner]
)

// The lock states (admin.StateHeld and the others) and admin.NoExpiry.
const (
	stateHeld      = listing.StateHeld
	statePartial   = listing.StatePartial
	stateContested = listing.StateContested
	stateOrphaned  = listing.StateOrphaned
	stateRevoked   = listing.StateRevoked
	noExpiry       = listing.NoExpiry
)
