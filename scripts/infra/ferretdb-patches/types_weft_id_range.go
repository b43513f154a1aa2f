// Added to FerretDB v1.24.2 as internal/types/weft_id_range.go by scripts/infra/binaries.ts
// (the patch "_id ranges read through the _id index"); Go source, compiled only there.

package types

// WeftIDRange is a find filter that is exactly an _id range over strings, {_id: {$gt|$gte: lower,
// $lt|$lte: upper}} (one bound or both), with the sort and limit that may be pushed down with it.
//
// The SQLite backend reads it through the _id index, which is ordered by the JSON text of each
// _id rather than by the string; it checks that the rows it returns are the right ones and
// otherwise reads the whole collection as before (see weft_id_range.go there).
type WeftIDRange struct {
	Lower, Upper                   string
	HasLower, HasUpper             bool
	LowerInclusive, UpperInclusive bool

	// Sorted is set when the find sorts by _id (Descending for -1): rows then come in _id order,
	// and a limit may be pushed down too.
	Sorted, Descending bool
}

// WeftIDRangeFor returns the range of a filter that is exactly an _id range over strings whose
// bounds consist of WeftIDRangeChar bytes, or nil. Unless the sort is by _id alone, the range
// only narrows what is read (the handler sorts in memory as always).
func WeftIDRangeFor(filter, sort *Document) *WeftIDRange {
	if filter.Len() != 1 {
		return nil
	}

	cond, ok := filter.Map()["_id"].(*Document)
	if !ok || cond.Len() == 0 || cond.Len() > 2 {
		return nil
	}

	r := new(WeftIDRange)
	values := cond.Values()

	for i, op := range cond.Keys() {
		s, ok := values[i].(string)
		if !ok {
			return nil
		}

		for j := 0; j < len(s); j++ {
			if !WeftIDRangeChar(s[j]) {
				return nil
			}
		}

		switch op {
		case "$gt", "$gte":
			if r.HasLower {
				return nil
			}

			r.HasLower, r.Lower, r.LowerInclusive = true, s, op == "$gte"
		case "$lt", "$lte":
			if r.HasUpper {
				return nil
			}

			r.HasUpper, r.Upper, r.UpperInclusive = true, s, op == "$lte"
		default:
			return nil
		}
	}

	if sort.Len() == 1 && sort.Keys()[0] == "_id" {
		r.Sorted = true
		r.Descending = sort.Values()[0] == int64(-1)
	}

	return r
}

// WeftIDRangeChar reports whether an ASCII byte is written as itself in JSON text: printable
// ASCII except '"', '\\' and the '&', '<' and '>' that Go's JSON encoder escapes.
func WeftIDRangeChar(c byte) bool {
	return c >= ' ' && c <= '~' && c != '"' && c != '\\' && c != '&' && c != '<' && c != '>'
}
