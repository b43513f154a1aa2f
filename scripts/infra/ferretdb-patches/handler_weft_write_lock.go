// Added to FerretDB's handler package by scripts/infra/binaries.ts (the patch "updates of one
// collection are atomic"); Go source, compiled only there.

package handler

import "sync"

// weftWriteLocks holds one mutex per "database.collection".
var weftWriteLocks sync.Map

// weftLockCollection serializes the commands that read a document, change it in Go and write
// it back (update, findAndModify) within one collection, and returns the unlock.
//
// FerretDB 1.24 runs such a command as a read, then a whole-document write, with nothing in
// between to stop another command doing the same: two updates of different fields of one
// document could both read it, and the second write then undid the first (a lost update).
// MongoDB makes every single-document write atomic; holding this lock from the read to the
// write gives FerretDB the same guarantee. Inserts and deletes need no lock: they never write
// back a document they read.
func weftLockCollection(db, collection string) func() {
	m, _ := weftWriteLocks.LoadOrStore(db+"."+collection, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()

	return mu.Unlock
}
