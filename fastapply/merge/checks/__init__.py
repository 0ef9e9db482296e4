"""The merge's refusal rules: a rulebook, one named function per rule, grouped by what they judge.

A rule reads one context (`base.py`) and returns a reason to refuse (a sentence the user sees) or
None. The tuples below run the rules of each context in order, and the first reason wins
(`first_refusal`), so a tuple's order is part of the merge's behaviour. A new rule is a function
in the module of what it judges plus its place in a tuple here; `tests/test_checks_rulebook.py`
checks that every rule is named, documented and defined in exactly one module. What every
accepted merge must pass besides (parse, empty body, marker leak, large deletion) is
`fastapply.validate`.
"""

from __future__ import annotations

from collections.abc import Callable

# The contexts, and the runner of a tuple of rules.
from fastapply.merge.checks.base import (
    DefinitionMatch,
    DeletedRun,
    LinePlan,
    MemberList,
    NewMember,
    RegionFit,
    ShownDefinition,
    ShownMember,
    first_refusal,
    named_refusal,
)
# One region placed by line anchors (RegionFit): which copy of repeated lines it means.
from fastapply.merge.checks.region_copies import (
    added_line_at_other_anchor,
    context_split,
    contested,
    deletes_inside_a_run_that_stands_elsewhere,
    edge_run_longer_elsewhere,
    rests_on_repeated_lines,
    run_past_span,
    repeated_edge,
    tied_alternative,
)
# ... blank lines at its edge.
from fastapply.merge.checks.region_blanks import (
    blank_bounded_end,
    blank_lines_dropped_between_kept_lines,
    blank_bounded_start,
    blank_then_new_lines,
    new_item_against_next_item,
    new_blank_lines_at_end,
    new_blank_lines_at_start,
    new_lines_after_blanks,
    new_lines_before_blanks,
)
# ... new lines at its edge: new, or edits of the original lines beyond?
from fastapply.merge.checks.region_edges import (
    defines_something,
    echoed_edge,
    edge_header_renamed,
    edge_line_keyed_like_next,
    edited_line_left_behind,
    new_definition_before_closer,
)
# ... attributes, decorators and annotations.
from fastapply.merge.checks.region_attributes import (
    deletion_after_attribute,
    edited_attribute,
    new_attribute_read_as_anchor,
)
# ... code at another indentation: moved into or out of a block, or pasted?
from fastapply.merge.checks.region_indent import (
    common_edge_moved_by_reindent,
    copy_of_kept_neighbour,
    reindented_and_shorter,
    reindented_copy_kept,
    reindented_run_beside,
)
# ... a new block around original code (the wrap reading).
from fastapply.merge.checks.region_wraps import (
    clause_top_under_other_marker,
    lone_statement_opener,
    opener_after_deleted_lines,
    opener_read_both_ways,
    shifted_around_new_block,
    shifted_onto_other_block,
    wrap_opener_anchored,
    wrapped_common_line_elsewhere,
    wrapped_run_kept_elsewhere,
)
# ... deletions the snippet does not show.
from fastapply.merge.checks.region_deletions import (
    deleted_declaration_still_used,
    deletion_after_common_anchor,
    deletion_edge_repeats,
    implied_deletion_too_large,
    line_doubled,
    marker_free_drops_lines,
    only_blank_lines_added,
)
# ... lines in another order than the original's.
from fastapply.merge.checks.region_order import moved_across_opener, reordered_run
# All regions placed, before the splice (LinePlan): what the markers, and the missing ones, say.
from fastapply.merge.checks.plan_flow import new_code_after_kept_exit
from fastapply.merge.checks.plan_markers import (
    changes_nothing,
    handler_rewritten_or_wrapped,
    marker_deeper_than_code,
    quoted_marker_for_nothing,
    shown_under_hidden_opener,
    unmarked_edge_tie,
    unmarked_head,
    unmarked_tail,
)
# ... indentation where the regions meet the kept file.
from fastapply.merge.checks.plan_indent import (
    edited_opener_before_marker,
    broken_indentation_seam,
    edited_opener_or_wrap,
    regions_shifted_apart,
    reindented_copy_beside,
)
# ... the definitions the splice would leave.
from fastapply.merge.checks.plan_definitions import (
    defined_twice,
    definition_added_again,
    header_deleted_body_kept,
    header_names_other_definition,
)
# A marker-free snippet placed by definition names (DefinitionMatch, ShownDefinition).
from fastapply.merge.checks.marker_free import (
    attributes_left_out_beside_shown,
    defined_several_times,
    definition_brace_off_indent,
    definitions_reordered,
    partial_with_changed_header,
)
# An original that is a section of a file: what the merge writes beyond its cuts (SectionEdit).
from fastapply.merge.checks.fragments import (
    blank_line_at_cut,
    block_opened_below_cut,
    code_beyond_cut,
    code_beyond_marked_edge,
    comment_shown_across_edge,
    definition_cut_at_head,
    definition_cut_at_tail,
    definition_restated_around_head,
    edge_line_written_twice,
    edge_region_out_of_order,
    header_written_twice,
    marker_beyond_section_edge,
    markerless_end_beyond_cut,
    markerless_on_broken_section,
    section_unchanged,
    shown_across_cut,
    unheld_line_at_marked_edge,
    unmarked_start_not_held,
)
from fastapply.merge.section import SectionEdit
# The member alignment (MemberList, DeletedRun, ShownMember, NewMember).
from fastapply.merge.checks.member_alignment import (
    ambiguous_member,
    attributes_left_out,
    closing_brace_off_indent,
    comments_left_out,
    cut_comment_differs,
    deletes_code_between,
    marker_inside_member,
    member_not_reindentable,
    member_not_shown_to_its_end,
    members_reordered,
    new_member_after_top_level_marker,
    new_member_among_elided,
    new_member_before_marker,
    nothing_matches,
    statement_among_members,
    unmarked_top_level_edge,
)

# One region placed by its line anchors (lineplace.py).
REGION_CHECKS: tuple[Callable[[RegionFit], str | None], ...] = (
    # (first: its doubt is which copy of a run, and the readings lack the far copy's deletion, so no
    # lone reading may answer it, as one may a `context_split`: readings.PLACEMENT_CHECKS)
    deletes_inside_a_run_that_stands_elsewhere,
    contested,
    context_split,
    tied_alternative,
    rests_on_repeated_lines,
    repeated_edge,
    new_blank_lines_at_start,
    new_blank_lines_at_end,
    new_lines_before_blanks,
    new_lines_after_blanks,
    blank_then_new_lines,
    new_item_against_next_item,
    blank_lines_dropped_between_kept_lines,
    blank_bounded_end,
    blank_bounded_start,
    echoed_edge,
    edited_line_left_behind,
    edge_line_keyed_like_next,
    new_definition_before_closer,
    edited_attribute,
    edge_header_renamed,
    reindented_and_shorter,
    shifted_around_new_block,
    marker_free_drops_lines,
    reindented_copy_kept,
    opener_read_both_ways,
    wrap_opener_anchored,
    copy_of_kept_neighbour,
    reindented_run_beside,
    wrapped_run_kept_elsewhere,
    deletion_edge_repeats,
    deletion_after_attribute,
    new_attribute_read_as_anchor,
    line_doubled,
    common_edge_moved_by_reindent,
    only_blank_lines_added,
    implied_deletion_too_large,
    deletion_after_common_anchor,
    reordered_run,
    moved_across_opener,
    added_line_at_other_anchor,
    edge_run_longer_elsewhere,
    shifted_onto_other_block,
    lone_statement_opener,
    opener_after_deleted_lines,
    run_past_span,
    deleted_declaration_still_used,
    wrapped_common_line_elsewhere,
    clause_top_under_other_marker,
)

# All regions placed, before they are spliced into the file (lineplace.py).
FILE_CHECKS: tuple[Callable[[LinePlan], str | None], ...] = (
    changes_nothing,
    defined_twice,
    unmarked_head,
    unmarked_tail,
    unmarked_edge_tie,
    marker_deeper_than_code,
    handler_rewritten_or_wrapped,
    shown_under_hidden_opener,
    edited_opener_or_wrap,
    quoted_marker_for_nothing,
    regions_shifted_apart,
    broken_indentation_seam,
    header_names_other_definition,
    definition_added_again,
    header_deleted_body_kept,
    reindented_copy_beside,
    edited_opener_before_marker,
    new_code_after_kept_exit,
)

# A marker-free snippet's definitions matched to the original's by name (tree.py).
TREE_CHECKS: tuple[Callable[[DefinitionMatch], str | None], ...] = (
    defined_several_times,
    definitions_reordered,
    definition_brace_off_indent,
    attributes_left_out_beside_shown,
)

# One snippet definition that replaces the original's (tree.py).
DEFINITION_CHECKS: tuple[Callable[[ShownDefinition], str | None], ...] = (
    partial_with_changed_header,
)

# A container's members aligned by name (members.py).
CONTAINER_CHECKS: tuple[Callable[[MemberList], str | None], ...] = (
    statement_among_members,
    ambiguous_member,
    members_reordered,
    nothing_matches,
)

# Original members the snippet skips without a marker: deleted (members.py).
DELETE_CHECKS: tuple[Callable[[DeletedRun], str | None], ...] = (
    unmarked_top_level_edge,
    deletes_code_between,
)

# A snippet member that replaces the original member it names (members.py).
MEMBER_CHECKS: tuple[Callable[[ShownMember], str | None], ...] = (
    marker_inside_member,
    closing_brace_off_indent,
    member_not_shown_to_its_end,
    member_not_reindentable,
    cut_comment_differs,
    attributes_left_out,
    comments_left_out,
)

# A snippet member that names no original member (members.py).
NEW_MEMBER_CHECKS: tuple[Callable[[NewMember], str | None], ...] = (
    new_member_after_top_level_marker,
    new_member_among_elided,
    new_member_before_marker,
)

# Any answer for an original that may be a section of a file, beyond its first and last lines
# (fastapply.validate, so every merge, reading and model answer).
SECTION_CHECKS: tuple[Callable[[SectionEdit], str | None], ...] = (
    # first the rules that name the definition the section cuts through: their reason is the
    # most precise of what to send (the whole of `public double nextDouble()`)
    definition_cut_at_head,
    definition_cut_at_tail,
    definition_restated_around_head,
    unheld_line_at_marked_edge,
    unmarked_start_not_held,
    markerless_end_beyond_cut,
    marker_beyond_section_edge,
    edge_region_out_of_order,
    header_written_twice,
    edge_line_written_twice,
    code_beyond_cut,
    block_opened_below_cut,
    shown_across_cut,
    comment_shown_across_edge,
    blank_line_at_cut,
    code_beyond_marked_edge,
    markerless_on_broken_section,
    section_unchanged,
)
