package admin

import (
	"iter"
	"unsafe"

	"github.com/redlock/redlock/internal/listing"
	"github.com/redlock/redlock/quorum"
)

// Package quorum builds a listing in the types of internal/listing, which have
// the memory layout of this package's Listing, LockInfo, MasterView and
// MasterAnswer field for field (TestListingShapesMatch checks it). A listing is
// therefore handed out as it was built, not copied: a Scanner's Listings share
// their unchanged locks and return the same Locks slice when nothing changed,
// as package quorum made them.

// shape is the type package quorum builds a Listing as.
type shape = listing.Listing[quorum.Owner]

// lockShape is the type package quorum builds a LockInfo as.
type lockShape = listing.LockInfo[quorum.Owner]

// listingOf returns l as this package's Listing (nil for nil).
func listingOf(l *shape) *Listing { return (*Listing)(unsafe.Pointer(l)) }

// lockInfoOf returns li as this package's LockInfo (nil for nil).
func lockInfoOf(li *lockShape) *LockInfo { return (*LockInfo)(unsafe.Pointer(li)) }

// shape returns l as package quorum built it.
func (l *Listing) shape() *shape { return (*shape)(unsafe.Pointer(l)) }

// shape returns li as package quorum built it.
func (li *LockInfo) shape() *lockShape { return (*lockShape)(unsafe.Pointer(li)) }

// locksOf yields the locks of seq as this package's LockInfo (nil for nil).
func locksOf(seq iter.Seq[*lockShape]) iter.Seq[*LockInfo] {
	if seq == nil {
		return nil
	}
	return func(yield func(*LockInfo) bool) {
		for li := range seq {
			if !yield(lockInfoOf(li)) {
				return
			}
		}
	}
}
