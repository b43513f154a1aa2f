// Added to FerretDB v1.24.2 as internal/backends/sqlite/weft_id_range.go by
// scripts/infra/binaries.ts (the patch "_id ranges read through the _id index"); Go source,
// compiled only there.

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/FerretDB/FerretDB/internal/backends"
	"github.com/FerretDB/FerretDB/internal/backends/sqlite/metadata"
	"github.com/FerretDB/FerretDB/internal/types"
	"github.com/FerretDB/FerretDB/internal/util/fsql"
	"github.com/FerretDB/FerretDB/internal/util/iterator"
	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
)

// The _id index orders rows by the JSON text of _id, not by the string. A string whose
// characters are all "plain" (WeftIDRangeChar, or from U+0080 on except U+2028 and U+2029) is
// written as itself in quotes, and two texts of strings made of characters from '#' on sort like
// the strings. Elsewhere they may not: an escaped character ('"', '\\', '&', '<', '>', control
// characters, U+2028, U+2029) is written starting with '\\', and a space or '!' sorts below the
// closing quote ("a b" before "a"). So a string can sit away from its place in the index, but
// only in a few "islands" next to a given string: its prefix followed by '\\' (an escape), by
// ' ' or '!', or by the closing quote (the prefix itself). The range read below probes, through
// the index, the islands where a string the read must return could hide; if any holds a row,
// or the rows read are not what they must be, it gives up (ok=false) and the caller reads the
// whole collection as before. Non-strings never fall in the range: numbers sort below any
// text, other values' texts do not start with '"', and a MongoDB string range never matches them.

// weftQueryIDRange answers a query through the _id index, or returns ok=false when it cannot
// prove that the rows it would return are those the handler needs.
func weftQueryIDRange(ctx context.Context, db *fsql.DB, table string, params *backends.QueryParams) (*backends.QueryResult, bool, error) {
	r := params.WeftIDRange

	if found, err := weftAnyInIslands(ctx, db, table, weftBoundIslands(r)); err != nil || found {
		return nil, false, err
	}

	clauses, args := weftIDRangeClauses(r, params.Limit)

	rows, err := db.QueryContext(ctx, prepareSelectClause(table, params.Comment, false, false)+clauses, args...)
	if err != nil {
		return nil, false, lazyerrors.Error(err)
	}

	iter := newQueryIterator(ctx, rows, false)

	// Without a limit every string of the range is returned: the handler filters and sorts.
	if params.Limit == 0 {
		return &backends.QueryResult{Iter: iter}, true, nil
	}

	defer iter.Close()

	var docs []*types.Document

	for {
		_, doc, err := iter.Next()
		if errors.Is(err, iterator.ErrIteratorDone) {
			break
		}

		if err != nil {
			return nil, false, lazyerrors.Error(err)
		}

		docs = append(docs, doc)
	}

	if int64(len(docs)) == params.Limit {
		if ok, err := weftFirstInOrder(ctx, db, table, r, docs); err != nil || !ok {
			return nil, false, err
		}
	}

	return &backends.QueryResult{Iter: iterator.Values(iterator.ForSlice(docs))}, true, nil
}

// weftFirstInOrder reports whether rows cut off by a limit are the first matches in _id order:
// all of them match, the last one read is plain and the last in _id order too, and no string
// that belongs before it hides in an island after it.
func weftFirstInOrder(ctx context.Context, db *fsql.DB, table string, r *types.WeftIDRange, docs []*types.Document) (bool, error) {
	ids := make([]string, len(docs))

	for i, doc := range docs {
		id, _ := doc.Get("_id")

		s, ok := id.(string)
		if !ok || !weftInRange(r, s) {
			return false, nil
		}

		ids[i] = s
	}

	last := ids[len(ids)-1]
	if !weftPlain(last) {
		return false, nil
	}

	for _, s := range ids {
		if (!r.Descending && s > last) || (r.Descending && s < last) {
			return false, nil
		}
	}

	found, err := weftAnyInIslands(ctx, db, table, weftCutIslands(r, last))

	return !found, err
}

// weftIDRangeClauses returns the WHERE, ORDER BY and LIMIT clauses of a range read, and their arguments.
func weftIDRangeClauses(r *types.WeftIDRange, limit int64) (string, []any) {
	var conds []string
	var args []any

	// Only strings have JSON texts from '"' to before '#'; a missing bound becomes that edge.
	if r.HasLower {
		op := ">"
		if r.LowerInclusive {
			op = ">="
		}

		conds = append(conds, fmt.Sprintf("%s %s ?", metadata.IDColumn, op))
		args = append(args, `"`+r.Lower+`"`)
	} else {
		conds = append(conds, metadata.IDColumn+` >= '"'`)
	}

	if r.HasUpper {
		op := "<"
		if r.UpperInclusive {
			op = "<="
		}

		conds = append(conds, fmt.Sprintf("%s %s ?", metadata.IDColumn, op))
		args = append(args, `"`+r.Upper+`"`)
	} else {
		conds = append(conds, metadata.IDColumn+` < '#'`)
	}

	q := " WHERE " + strings.Join(conds, " AND ")

	if r.Sorted {
		q += " ORDER BY " + metadata.IDColumn
		if r.Descending {
			q += " DESC"
		}
	}

	if limit != 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}

	return q, args
}

func weftInRange(r *types.WeftIDRange, s string) bool {
	switch {
	case r.HasLower && (s < r.Lower || (s == r.Lower && !r.LowerInclusive)):
		return false
	case r.HasUpper && (s > r.Upper || (s == r.Upper && !r.UpperInclusive)):
		return false
	default:
		return true
	}
}

// weftPlain reports whether a string's JSON text is the string in quotes.
func weftPlain(s string) bool {
	for _, c := range s {
		switch {
		case c < 0x80:
			if !types.WeftIDRangeChar(byte(c)) {
				return false
			}
		case c == 0x2028, c == 0x2029, c == '\uFFFD':
			return false
		}
	}

	return true
}

// weftIsland is the part of the index holding the texts that start with `"` + prefix and then:
// '\\' (an escape), ' ' or '!', or the closing quote.
type weftIsland struct {
	prefix string
	next   byte
}

func (i weftIsland) bounds() (string, string) {
	switch i.next {
	case ' ':
		return `"` + i.prefix + ` `, `"` + i.prefix + `"`
	case '"':
		return `"` + i.prefix + `"`, `"` + i.prefix + `"#`
	default:
		return `"` + i.prefix + `\`, `"` + i.prefix + `]`
	}
}

// weftBoundIslands returns where a string of the range can sit outside the range's texts: after
// the lower bound plus ' ' or '!'; where an escape replaces a character above the lower bound's
// (only U+2028/U+2029 sort above '\\') or below the upper bound's; or as a prefix of the upper
// bound that is followed there by ' ' or '!'. Positions inside the bounds' common prefix are
// skipped: a string that differs there is out of the range.
func weftBoundIslands(r *types.WeftIDRange) []weftIsland {
	common := 0
	if r.HasLower && r.HasUpper {
		common = weftCommonPrefix(r.Lower, r.Upper)
	}

	var res []weftIsland

	if r.HasLower {
		res = append(res, weftIsland{prefix: r.Lower, next: ' '})

		for k := common; k < len(r.Lower); k++ {
			if r.Lower[k] > '\\' {
				res = append(res, weftIsland{prefix: r.Lower[:k], next: '\\'})
			}
		}
	}

	if r.HasUpper {
		res = append(res, weftBelowIslands(r.Upper, common)...)
	}

	return res
}

// weftBelowIslands returns where a string below s (differing after its first `from` bytes) can
// sit above it: an escape where s has a character below '\\', or a prefix of s followed by ' ' or '!'.
func weftBelowIslands(s string, from int) []weftIsland {
	var res []weftIsland

	for k := from; k < len(s); k++ {
		if s[k] < '\\' {
			res = append(res, weftIsland{prefix: s[:k], next: '\\'})
		}

		if s[k] == ' ' || s[k] == '!' {
			res = append(res, weftIsland{prefix: s[:k], next: '"'})
		}
	}

	return res
}

// weftCutIslands returns where a string that belongs before the last row read (in the read's
// order) can sit after it in the index.
func weftCutIslands(r *types.WeftIDRange, last string) []weftIsland {
	if !r.Descending {
		from := 0
		if r.HasLower {
			from = weftCommonPrefix(last, r.Lower)
		}

		return weftBelowIslands(last, from)
	}

	// Above last: last plus ' ' or '!', or an escape where last has a character above '\\'.
	from := 0
	if r.HasUpper {
		from = weftCommonPrefix(last, r.Upper)
	}

	res := []weftIsland{{prefix: last, next: ' '}}

	for k := from; k < len(last); k++ {
		if last[k] > '\\' {
			res = append(res, weftIsland{prefix: last[:k], next: '\\'})
		}
	}

	return res
}

func weftCommonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}

	return n
}

// weftAnyInIslands reports whether any row's _id text lies in one of the islands
// (each probe is one seek in the _id index).
func weftAnyInIslands(ctx context.Context, db *fsql.DB, table string, islands []weftIsland) (bool, error) {
	const perQuery = 100 // SQLite allows 500 terms in a compound SELECT

	for len(islands) > 0 {
		n := min(perQuery, len(islands))

		parts := make([]string, n)
		args := make([]any, 0, 2*n)

		for i, island := range islands[:n] {
			from, to := island.bounds()
			parts[i] = fmt.Sprintf(`SELECT 1 FROM %q WHERE %s >= ? AND %s < ?`, table, metadata.IDColumn, metadata.IDColumn)
			args = append(args, from, to)
		}

		islands = islands[n:]

		var one int

		err := db.QueryRowContext(ctx, strings.Join(parts, " UNION ALL ")+" LIMIT 1", args...).Scan(&one)
		if err == nil {
			return true, nil
		}

		if !errors.Is(err, sql.ErrNoRows) {
			return false, lazyerrors.Error(err)
		}
	}

	return false, nil
}
