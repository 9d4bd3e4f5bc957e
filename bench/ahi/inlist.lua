-- GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
-- sysbench script of bench/ahi: the source report's workload, primary-key IN-lists on ahi_test.
--   sysbench bench/ahi/inlist.lua --rows=2000000 --in-size=30 [--sleep-ms=5] --threads=64 [--rate=R] run
-- Each event: SELECT LEFT(v, 1) FROM ahi_test WHERE i IN (<in-size uniform random ids in 1..rows>),
-- text protocol; --sleep-ms pauses the thread after each query (the source: 300 threads, 5 ms).

sysbench.cmdline.options = {
   rows = {"ids 1..rows exist in the table", 2000000},
   ["in-size"] = {"ids per IN-list", 30},
   ["sleep-ms"] = {"milliseconds each thread sleeps after a query", 0},
   table = {"table to read", "ahi_test"},
}

local ffi = require("ffi")
ffi.cdef[[int usleep(unsigned int usec);]]

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   rows = sysbench.opt.rows
   in_size = sysbench.opt["in-size"]
   sleep_us = sysbench.opt["sleep-ms"] * 1000
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
