//! CUSTOMER by last name: the secondary lookup Payment and Order-Status use in 60% of their runs
//! (clauses 2.5.1.2 and 2.6.1.2), built once at load time.
//!
//! Customers are never inserted or deleted and C_LAST / C_FIRST never change, so the lookup is a
//! static structure rather than a concurrent index: for each district and each of the 1,000 last
//! names, the customer ids with that name sorted by C_FIRST (the order in which the transactions
//! pick the customer at position `ceil(n / 2)`). Every C_LAST is [`last_name`] of a number in
//! `0..=999`, and names invert to their numbers exactly ([`last_name_number`]), so the name number
//! is an exact dense key, with no hashing and no collisions:
//!
//! ```text
//! offsets: [u32; districts * 1000 + 1]   group g = district_slot * 1000 + name number
//! ids:     [u32; customers]              ids[offsets[g]..offsets[g + 1]] = C_IDs of group g,
//!                                        sorted by (C_FIRST, C_ID)
//! ```
//!
//! This costs 4 bytes per customer plus 4 KB per district, and a lookup is two array reads.
//!
//! [`last_name`]: super::random::last_name
//! [`last_name_number`]: super::random::last_name_number

use super::rows::FixedStr;
use super::schema::{DISTRICTS_PER_WAREHOUSE, TpccLayout};

/// Distinct last names (numbers `0..=999`).
pub const LAST_NAMES: usize = 1000;

/// One customer as the index sees it while it is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CustomerName {
    /// The number of the customer's C_LAST.
    pub last_name: u16,
    /// C_FIRST.
    pub first: FixedStr<16>,
    /// C_ID.
    pub c_id: u32,
}

/// C_IDs per (warehouse, district, last name), sorted by C_FIRST (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomersByLastName {
    layout: TpccLayout,
    offsets: Vec<u32>,
    ids: Vec<u32>,
}

impl CustomersByLastName {
    /// Builds the index from each district's customers; `districts[slot]` holds the customers of
    /// the district with that [`TpccLayout::district_slot`].
    pub fn build(layout: TpccLayout, mut districts: Vec<Vec<CustomerName>>) -> Self {
        let slots = (layout.warehouses * DISTRICTS_PER_WAREHOUSE) as usize;
        assert_eq!(districts.len(), slots, "one customer list per district");
        let total: usize = districts.iter().map(Vec::len).sum();
        let mut offsets = Vec::with_capacity(slots * LAST_NAMES + 1);
        let mut ids = Vec::with_capacity(total);
        for customers in &mut districts {
            customers.sort_unstable_by(|a, b| {
                (a.last_name, a.first.as_bytes(), a.c_id).cmp(&(
                    b.last_name,
                    b.first.as_bytes(),
                    b.c_id,
                ))
            });
            let mut next = customers.iter().peekable();
            for name in 0..LAST_NAMES as u16 {
                offsets.push(u32::try_from(ids.len()).expect("customer count fits in u32"));
                while let Some(c) = next.next_if(|c| c.last_name == name) {
                    ids.push(c.c_id);
                }
            }
            assert!(next.next().is_none(), "last-name number above 999");
        }
        offsets.push(u32::try_from(ids.len()).expect("customer count fits in u32"));
        CustomersByLastName {
            layout,
            offsets,
            ids,
        }
    }

    /// The C_IDs of district `(w, d)` whose C_LAST is name number `last_name`, sorted by
    /// C_FIRST; empty when no customer has that name.
    #[inline]
    pub fn get(&self, w: u32, d: u8, last_name: u16) -> &[u32] {
        assert!(
            usize::from(last_name) < LAST_NAMES,
            "last-name number {last_name}"
        );
        let group = self.layout.district_slot(w, d) as usize * LAST_NAMES + usize::from(last_name);
        &self.ids[self.offsets[group] as usize..self.offsets[group + 1] as usize]
    }

    /// Customers indexed.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no customer is indexed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Heap bytes the index holds.
    pub fn memory_bytes(&self) -> usize {
        (self.offsets.capacity() + self.ids.capacity()) * std::mem::size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(last_name: u16, first: &[u8], c_id: u32) -> CustomerName {
        CustomerName {
            last_name,
            first: FixedStr::new(first),
            c_id,
        }
    }

    #[test]
    fn groups_by_district_and_name_sorted_by_first_name() {
        let layout = TpccLayout {
            warehouses: 1,
            orders_per_district: 3000,
        };
        let mut districts = vec![Vec::new(); 10];
        districts[0] = vec![
            name(5, b"zed", 1),
            name(5, b"amy", 2),
            name(7, b"bob", 3),
            name(5, b"amy", 0),
        ];
        districts[9] = vec![name(999, b"x", 4), name(0, b"y", 5)];
        let ix = CustomersByLastName::build(layout, districts);
        assert_eq!(ix.len(), 6);
        assert_eq!(ix.get(1, 1, 5), &[0, 2, 1]);
        assert_eq!(ix.get(1, 1, 7), &[3]);
        assert!(ix.get(1, 1, 6).is_empty());
        assert!(ix.get(1, 2, 5).is_empty());
        assert_eq!(ix.get(1, 10, 999), &[4]);
        assert_eq!(ix.get(1, 10, 0), &[5]);
        assert!(ix.memory_bytes() >= (10 * 1000 + 1 + 6) * 4);
    }
}
