-- GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
-- sysbench script of bench/memcached: SQL primary-key point selects of the keys the memcached
-- container serves. Key n (uniform in 1..rows) is n as 32 zero-padded digits, as in mcget.c.
--   sysbench bench/memcached/point_select.lua --rows=100000 [--prepared=on] --rate=R --threads=C run
-- Text protocol by default (the statement an application sends: SELECT * ... WHERE id = '<key>');
-- --prepared=on uses a server-side prepared statement instead.

sysbench.cmdline.options = {
   rows = {"keys in the table (1..rows)", 100000},
   table = {"schema.table to read", "bench_memc.token"},
   prepared = {"server-side prepared statement instead of the text protocol", false},
}

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   rows = sysbench.opt.rows
   if sysbench.opt.prepared then
      stmt = con:prepare("SELECT * FROM " .. sysbench.opt.table .. " WHERE id = ?")
      param = stmt:bind_create(sysbench.sql.type.VARCHAR, 32)
      stmt:bind_param(param)
   end
end

function event()
   local key = string.format("%032d", sysbench.rand.uniform(1, rows))
   if stmt then
      param:set(key)
      stmt:execute()
   else
      con:query("SELECT * FROM " .. sysbench.opt.table .. " WHERE id = '" .. key .. "'")
   end
end

function thread_done()
   if stmt then
      stmt:close()
   end
   con:disconnect()
end
