-- GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
-- sysbench script of bench/ahi: the source report's workload, primary-key IN-lists on ahi_test.
--   sysbench bench/ahi/inlist.lua --rows=2000000 --in_size=30 [--sleep_ms=5] --threads=64 [--rate=R] run
-- Each event: SELECT LEFT(v, 1) FROM ahi_test WHERE i IN (<in_size uniform random ids in 1..rows>),
-- text protocol; --sleep_ms pauses the thread after each query (the source: 300 threads, 5 ms).
--   sysbench bench/ahi/inlist.lua --rows=2000000 --in_size=30 --threads=8 hashwarm
-- reads every id once in IN-lists of consecutive ids (each leaf page searched many times in a row),
-- so that InnoDB builds the adaptive hash index for the whole table before a measurement.

sysbench.cmdline.options = {
   rows = {"ids 1..rows exist in the table", 2000000},
   in_size = {"ids per IN-list", 30},
   sleep_ms = {"milliseconds each thread sleeps after a query", 0},
   table = {"table to read", "ahi_test"},
}

sysbench.cmdline.commands = {
   hashwarm = {function () cmd_hashwarm() end, sysbench.cmdline.PARALLEL_COMMAND},
}

local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int usec);]]

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   rows = sysbench.opt.rows
   in_size = sysbench.opt.in_size
   sleep_us = sysbench.opt.sleep_ms * 1000
   head = "SELECT LEFT(v, 1) FROM " .. sysbench.opt.table .. " WHERE i IN ("
   ids = {}
end

function event()
   for n = 1, in_size do
      ids[n] = sysbench.rand.uniform(1, rows)
   end
   con:query(head .. table.concat(ids, ",") .. ")")
   if sleep_us > 0 then
      ffi.C.usleep(sleep_us)
   end
end

function thread_done()
   con:disconnect()
end

function cmd_hashwarm()
   local con = sysbench.sql.driver():connect()
   local n, step = sysbench.opt.in_size, sysbench.opt.threads
   local head = "SELECT LEFT(v, 1) FROM " .. sysbench.opt.table .. " WHERE i IN ("
   local blocks = math.ceil(sysbench.opt.rows / n)
   local list = {}
   for block = sysbench.tid, blocks - 1, step do
      for k = 1, n do
         list[k] = block * n + k
      end
      con:query(head .. table.concat(list, ",") .. ")")
   end
   con:disconnect()
end
