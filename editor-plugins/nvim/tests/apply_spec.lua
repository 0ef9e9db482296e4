-- Headless end-to-end test of the plugin against the real fastapply-lsp (engine structural).
--
--   FASTAPPLY_LSP="/path/.venv/bin/fastapply-lsp" FASTAPPLY_CASES=/tmp/cases.json \
--     nvim --headless -u NONE -i NONE -n --cmd "set rtp^=editor-plugins/nvim" -l editor-plugins/nvim/tests/apply_spec.lua
--
-- FASTAPPLY_CASES is a JSON list of {path, update, expected, original}: each `path` holds the original.
-- FASTAPPLY_JUDGED is a JSON {path, original, update, readings = {texts}, hows}: a snippet the
-- structural merge refuses with those readings (computed by the Python side, independently).
-- Prints "ok ..." / "FAIL ..." lines and exits 0 only when everything passed.

local failures, passed = 0, 0
local t0 = vim.uv.hrtime()
local function check(cond, what)
  local stamp = string.format("[%6.2fs] ", (vim.uv.hrtime() - t0) / 1e9)
  if cond then
    passed = passed + 1
    io.stdout:write("ok   " .. stamp .. what .. "\n")
  else
    failures = failures + 1
    io.stdout:write("FAIL " .. stamp .. what .. "\n")
  end
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function buf_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
end

local messages = {}
local fa = require("fastapply")
fa.setup({
  cmd = { os.getenv("FASTAPPLY_LSP"), "--engine", "structural" },
  register = "a",
  progress = false,
  notify = function(msg, level)
    table.insert(messages, { msg = msg, level = level })
  end,
})

local function wait_done(what)
  local ok = vim.wait(20000, function()
    return fa.pending == 0
  end, 10)
  check(ok, what .. ": the command finished")
end

local function run_apply(cmd)
  vim.cmd(cmd) -- waits for the server to start, sends the request; the reply comes in wait_done
end

local cases = vim.json.decode(read(os.getenv("FASTAPPLY_CASES")))

-- vim.ui.select, stubbed: `pick(items, opts, on_choice)` plays the user; what it was offered is kept.
local pick = function(_, _, on_choice)
  on_choice(nil, nil)
end
local offered = {}
vim.ui.select = function(items, opts, on_choice)
  local p = fa.reading_preview
  table.insert(offered, {
    items = items,
    prompt = opts.prompt,
    labels = vim.tbl_map(opts.format_item, items),
    preview = p and vim.api.nvim_win_is_valid(p.win) and {
      filetype = vim.bo[p.buf].filetype,
      buftype = vim.bo[p.buf].buftype,
      text = buf_text(p.buf),
    } or nil,
  })
  pick(items, opts, on_choice)
end

local function preview_closed()
  return fa.reading_preview == nil and #vim.tbl_filter(function(w)
    return vim.bo[vim.api.nvim_win_get_buf(w)].filetype == "diff"
  end, vim.api.nvim_list_wins()) == 0
end

-- A refused apply offers its readings: each one picked gives exactly that file; a pick after the
-- buffer changed applies nothing and says so; cancel applies nothing.
function choices_spec()
  local judged = vim.json.decode(read(os.getenv("FASTAPPLY_JUDGED")))
  vim.cmd.edit(vim.fn.fnameescape(judged.path))
  local buf = vim.api.nvim_get_current_buf()
  vim.fn.setreg("a", judged.update)
  for k, want in ipairs(judged.readings) do
    local n = #offered
    pick = function(items, _, on_choice)
      on_choice(items[k], k)
    end
    run_apply("FastApply")
    wait_done("reading " .. k)
    local o = offered[n + 1]
    check(o ~= nil and #o.items == #judged.readings, "reading " .. k .. ": every reading offered")
    check(buf_text(buf) == want, "reading " .. k .. ": the buffer equals reading " .. k)
    if o then
      check(o.labels[k]:find(judged.hows[k], 1, true) ~= nil and o.labels[k]:find(" — ") ~= nil,
        "reading " .. k .. ": label has its how and first differing line: " .. o.labels[k])
      check(o.prompt:find(judged.hint, 1, true) == 1,
        "reading " .. k .. ": the prompt holds the hint: " .. o.prompt)
      check(o.preview and o.preview.filetype == "diff" and o.preview.buftype == "nofile"
        and o.preview.text:find("+++ reading " .. k, 1, true) ~= nil,
        "reading " .. k .. ": a nofile diff preview while choosing")
    end
    check(preview_closed(), "reading " .. k .. ": the preview window is closed")
    vim.cmd("silent undo")
    check(buf_text(buf) == judged.original, "reading " .. k .. ": one undo restores the original")
  end

  -- the buffer edited while the choice is open: nothing applied, a clear message
  local waiting
  pick = function(items, _, on_choice)
    waiting = function()
      on_choice(items[1], 1)
    end
  end
  run_apply("FastApply")
  check(vim.wait(20000, function()
    return waiting ~= nil
  end, 10), "stale: the choice opened")
  vim.api.nvim_buf_set_lines(buf, 0, 0, false, { "# typed while choosing" })
  local typed = buf_text(buf)
  local before = #messages
  waiting()
  wait_done("stale")
  check(buf_text(buf) == typed, "stale: nothing applied")
  local last = messages[#messages]
  check(#messages == before + 1 and last.level == vim.log.levels.ERROR
    and last.msg:find("changed since the readings were computed; apply the snippet again", 1, true) ~= nil,
    "stale: one clear error message: " .. vim.inspect(last and last.msg))
  check(preview_closed(), "stale: the preview window is closed")
  vim.cmd("silent undo")

  -- cancel: nothing applied
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  pick = function(_, _, on_choice)
    on_choice(nil, nil)
  end
  run_apply("FastApply")
  wait_done("cancel")
  check(buf_text(buf) == judged.original and vim.api.nvim_buf_get_changedtick(buf) == tick, "cancel: nothing applied")
  check(messages[#messages].msg:find("no reading chosen") ~= nil, "cancel: says nothing changed")
  check(preview_closed(), "cancel: the preview window is closed")
end
local ok_run, err = pcall(function()
  for i, case in ipairs(cases) do
    vim.cmd.edit(vim.fn.fnameescape(case.path))
    local buf = vim.api.nvim_get_current_buf()
    check(buf_text(buf) == case.original, "case " .. i .. ": buffer holds the original")
    -- A mark and an extmark on the first line, the cursor on the last line: all must survive.
    local nlines = vim.api.nvim_buf_line_count(buf)
    local first_line = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1]
    local last_line = vim.api.nvim_buf_get_lines(buf, nlines - 1, nlines, false)[1]
    vim.api.nvim_buf_set_mark(buf, "m", 1, 0, {})
    local ns = vim.api.nvim_create_namespace("fastapply_test")
    local ext_last = vim.api.nvim_buf_set_extmark(buf, ns, nlines - 1, 0, {})
    vim.api.nvim_win_set_cursor(0, { nlines, 0 })
    vim.fn.setreg("a", case.update)
    local before = #messages
    run_apply("FastApply")
    wait_done("case " .. i)
    local text = buf_text(buf)
    check(text == case.expected, "case " .. i .. ": buffer equals the expected merge (" .. case.path .. ")")
    check(fa.last and fa.last.edits >= 1, "case " .. i .. ": summary " .. vim.inspect(fa.last and fa.last.message))
    check(#messages == before + 1 and messages[#messages].level == vim.log.levels.INFO, "case " .. i .. ": one info message")
    -- marks/extmarks/cursor follow their lines (both lines are unchanged in these cases)
    local m = vim.api.nvim_buf_get_mark(buf, "m")
    check(vim.api.nvim_buf_get_lines(buf, m[1] - 1, m[1], false)[1] == first_line, "case " .. i .. ": mark m kept its line")
    local pos = vim.api.nvim_buf_get_extmark_by_id(buf, ns, ext_last, {})
    check(vim.api.nvim_buf_get_lines(buf, pos[1], pos[1] + 1, false)[1] == last_line, "case " .. i .. ": extmark kept its line")
    local cur = vim.api.nvim_win_get_cursor(0)
    check(vim.api.nvim_buf_get_lines(buf, cur[1] - 1, cur[1], false)[1] == last_line, "case " .. i .. ": cursor kept its line")
    -- undo history: one undo restores the original, redo the merge
    vim.cmd("silent undo")
    check(buf_text(buf) == case.original, "case " .. i .. ": undo restores the original")
    vim.cmd("silent redo")
    check(buf_text(buf) == case.expected, "case " .. i .. ": redo gives the merge again")
  end

  -- A scratch buffer: :FastApplyScratch, type the snippet, :FastApply applies it to the file.
  local case = cases[1]
  vim.cmd.buffer(vim.fn.bufnr(case.path))
  vim.cmd("silent undo")
  local target = vim.api.nvim_get_current_buf()
  local scratch = fa.open_scratch()
  vim.api.nvim_buf_set_lines(scratch, 0, -1, false, vim.split((case.update:gsub("\n$", "")), "\n", { plain = true }))
  run_apply("FastApply")
  wait_done("scratch")
  check(buf_text(target) == case.expected, "scratch buffer applied to its target")
  check(not vim.api.nvim_buf_is_valid(scratch), "scratch buffer closed after the apply")

  -- A visual selection in a second window is applied to the previous window's buffer.
  vim.api.nvim_set_current_buf(target)
  vim.cmd("silent undo")
  vim.cmd("new")
  local snippet = vim.api.nvim_get_current_buf()
  vim.bo[snippet].buftype = "nofile"
  vim.api.nvim_buf_set_lines(snippet, 0, -1, false,
    vim.list_extend({ "some chat text" }, vim.split((case.update:gsub("\n$", "")), "\n", { plain = true })))
  run_apply("2,$FastApply")
  wait_done("selection")
  check(buf_text(target) == case.expected, "visual selection applied to the previous window's buffer")
  vim.cmd("close")

  -- Preview: a diff in a split, the file untouched.
  vim.api.nvim_set_current_buf(target)
  vim.cmd("silent undo")
  local tick = vim.api.nvim_buf_get_changedtick(target)
  vim.fn.setreg("a", case.update)
  run_apply("FastApplyPreview")
  wait_done("preview")
  local pbuf = vim.api.nvim_get_current_buf()
  check(pbuf ~= target and vim.bo[pbuf].filetype == "diff", "preview opened a diff buffer")
  local diff = buf_text(pbuf)
  check(diff:find("^%-%-%- a/") ~= nil and diff:find("\n%+") ~= nil, "preview shows a unified diff")
  check(vim.api.nvim_buf_get_changedtick(target) == tick, "preview changed nothing")
  vim.cmd("close")

  -- A failed apply changes nothing and says why.
  vim.cmd.edit(vim.fn.fnameescape(os.getenv("FASTAPPLY_BROKEN")))
  local broken = vim.api.nvim_get_current_buf()
  local broken_text = buf_text(broken)
  tick = vim.api.nvim_buf_get_changedtick(broken)
  vim.fn.setreg("a", "def g():\n    return 1\n")
  local before = #messages
  pick = function(_, _, on_choice)
    on_choice(nil, nil) -- whatever readings it offers: none taken
  end
  run_apply("FastApply")
  wait_done("failed apply")
  check(buf_text(broken) == broken_text and vim.api.nvim_buf_get_changedtick(broken) == tick, "failed apply changed nothing")
  local failed = messages[before + 1]
  check(failed and failed.level == vim.log.levels.ERROR and failed.msg:find("does not parse") ~= nil,
    "failed apply: an error message saying why: " .. vim.inspect(failed and failed.msg))

  choices_spec()

  -- An empty register is refused before asking the server.
  vim.fn.setreg("b", "")
  run_apply("FastApply b")
  check(messages[#messages].msg:find("register b is empty") ~= nil, "empty register refused")
end)
for _, m in ipairs(messages) do
  io.stdout:write("message: " .. m.msg .. "\n")
end
check(ok_run, "no Lua error" .. (ok_run and "" or (": " .. tostring(err))))

for _, client in ipairs(vim.lsp.get_clients({ name = "fastapply" })) do
  if vim.fn.has("nvim-0.11") == 1 then
    client:stop()
  else
    client.stop()
  end
end
io.stdout:write(string.format("%d passed, %d failed\n", passed, failures))
io.stdout:flush()
os.exit(failures == 0 and 0 or 1)
