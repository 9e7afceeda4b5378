-- pandoc filter for the man pages (CMakeLists.txt, "Man pages").
--
-- docs/configuration.md is the body of pi-sandbox-config(5), after the page's own NAME,
-- SYNOPSIS and DESCRIPTION: its title (its one level-1 heading) is dropped and its sections
-- become the page's sections, in capitals as man(7) has them. Tables become definition
-- lists, one entry per row: the man page is read at 80 columns, where a three-column table
-- leaves words too little room to be set (troff's "cannot adjust line").
function Header(h)
  if h.level == 1 and pandoc.utils.stringify(h) == "The trusted configuration" then
    return {}
  end
  if h.level > 1 then
    h.level = h.level - 1
  end
  if h.level == 1 then
    h.content = pandoc.text.upper(pandoc.utils.stringify(h))
  end
  return h
end

function Table(t)
  local simple = pandoc.utils.to_simple_table(t)
  local items = {}
  for _, row in ipairs(simple.rows) do
    local term = pandoc.utils.blocks_to_inlines(row[1])
    local definition = {}
    for column = 2, #row do
      local label = pandoc.utils.stringify(simple.headers[column])
      local inlines = {pandoc.Emph(label .. ":"), pandoc.Space()}
      for _, inline in ipairs(pandoc.utils.blocks_to_inlines(row[column])) do
        table.insert(inlines, inline)
      end
      table.insert(definition, pandoc.Plain(inlines))
    end
    table.insert(items, {term, {definition}})
  end
  return pandoc.DefinitionList(items)
end
