//! The nine TPC-C tables' rows (TPC-C 5.11, clause 1.3) and their fixed-size byte encoding.
//!
//! Every field of clause 1.3 is here, in the spec's order, with a Rust type wide enough for the
//! spec's domain:
//!
//! | spec type                     | Rust type       | encoding                                  |
//! | ----------------------------- | --------------- | ----------------------------------------- |
//! | identifier (W, C, O, I ids)   | `u32`           | 4 bytes little-endian                     |
//! | D_ID (10), OL_NUMBER (15)     | `u8`            | 1 byte                                    |
//! | numeric(1..2) (counts)        | `u8`            | 1 byte                                    |
//! | numeric(4) (counts, qty)      | `u16` / `i16`   | 2 bytes little-endian                     |
//! | numeric(8) (S_YTD)            | `u32`           | 4 bytes little-endian                     |
//! | numeric(4,4) (tax, discount)  | `u16`           | ten-thousandths (`0.1234` is `1234`)      |
//! | numeric(5,2), numeric(6,2)    | `i32`           | cents                                     |
//! | numeric(12,2)                 | `i64`           | cents                                     |
//! | date and time                 | `u64`           | seconds since the Unix epoch              |
//! | nullable carrier / date       | `Option<u8/u64>`| as above, `0` encodes null (ids start at 1, dates are after 1970) |
//! | variable text, size N         | [`FixedStr<N>`] | N bytes, zero-padded (the spec's max size) |
//! | fixed text, size N            | [`FixedStr<N>`] | N bytes                                   |
//!
//! Fields are packed in declaration order with no padding, so each field sits at a fixed offset and
//! a row is exactly [`Row::BYTES`] long: that constant is the table's payload size. The one macro
//! below generates struct, size, encoder and decoder from one field list, so the three cannot drift
//! apart.
//!
//! Sizes matter for the hot tables: an ORDER-LINE row is 55 bytes, so with up to 8 bytes of
//! protocol metadata it still occupies one 64-byte record; a STOCK row is 308 bytes (five lines).

/// A fixed-width field of a row.
pub trait Field: Sized {
    /// Encoded size in bytes.
    const BYTES: usize;
    /// Writes the field into `out` (exactly `BYTES` long).
    fn put(&self, out: &mut [u8]);
    /// Reads the field from `bytes` (exactly `BYTES` long).
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! int_field {
    ($($ty:ty),*) => {$(
        impl Field for $ty {
            const BYTES: usize = std::mem::size_of::<$ty>();
            #[inline]
            fn put(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn get(bytes: &[u8]) -> Self {
                <$ty>::from_le_bytes(bytes.try_into().expect("field width"))
            }
        }
    )*};
}
int_field!(u8, u16, i16, u32, i32, u64, i64);

/// A nullable id or date: `0` encodes null, so `Some(0)` cannot be stored (ids start at 1 and
/// dates are seconds after 1970).
macro_rules! nullable_field {
    ($($ty:ty),*) => {$(
        impl Field for Option<$ty> {
            const BYTES: usize = std::mem::size_of::<$ty>();
            #[inline]
            fn put(&self, out: &mut [u8]) {
                debug_assert_ne!(*self, Some(0), "0 encodes null");
                self.unwrap_or(0).put(out);
            }
            #[inline]
            fn get(bytes: &[u8]) -> Self {
                Some(<$ty>::get(bytes)).filter(|&v| v != 0)
            }
        }
    )*};
}
nullable_field!(u8, u64);

/// Text of at most `N` bytes, stored zero-padded in exactly `N` bytes. TPC-C text is ASCII and
/// never contains NUL, so the content is everything before the first zero byte.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FixedStr<const N: usize>([u8; N]);

impl<const N: usize> FixedStr<N> {
    /// The text `s`; panics when it is longer than `N` bytes or contains NUL (a loader bug).
    pub fn new(s: &[u8]) -> Self {
        assert!(s.len() <= N, "text of {} bytes in a field of {N}", s.len());
        debug_assert!(!s.contains(&0), "NUL in TPC-C text");
        let mut bytes = [0u8; N];
        bytes[..s.len()].copy_from_slice(s);
        FixedStr(bytes)
    }

    /// The content, without padding.
    pub fn as_bytes(&self) -> &[u8] {
        let len = self.0.iter().position(|&b| b == 0).unwrap_or(N);
        &self.0[..len]
    }

    /// Content length in bytes.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.0.first().is_none_or(|&b| b == 0)
    }

    /// The content as text (TPC-C text is ASCII; anything else shows as replacement characters).
    pub fn to_string_lossy(&self) -> String {
        String::from_utf8_lossy(self.as_bytes()).into_owned()
    }
}

impl<const N: usize> Default for FixedStr<N> {
    fn default() -> Self {
        FixedStr([0u8; N])
    }
}

impl<const N: usize> std::fmt::Debug for FixedStr<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.to_string_lossy())
    }
}

impl<const N: usize> Field for FixedStr<N> {
    const BYTES: usize = N;
    #[inline]
    fn put(&self, out: &mut [u8]) {
        out.copy_from_slice(&self.0);
    }
    #[inline]
    fn get(bytes: &[u8]) -> Self {
        FixedStr(bytes.try_into().expect("field width"))
    }
}

/// A row of one TPC-C table, encoded to a fixed-size payload.
pub trait Row: Sized {
    /// Payload size of the table, in bytes.
    const BYTES: usize;
    /// Writes the row into `out` (exactly `BYTES` long).
    fn encode(&self, out: &mut [u8]);
    /// Reads a row from `bytes` (exactly `BYTES` long).
    fn decode(bytes: &[u8]) -> Self;
}

macro_rules! tpcc_row {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* pub $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct $name {
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        impl Row for $name {
            const BYTES: usize = 0 $( + <$ty as Field>::BYTES )*;

            fn encode(&self, out: &mut [u8]) {
                assert_eq!(out.len(), Self::BYTES, concat!(stringify!($name), " payload size"));
                let mut at = 0;
                $(
                    let end = at + <$ty as Field>::BYTES;
                    self.$field.put(&mut out[at..end]);
                    at = end;
                )*
                debug_assert_eq!(at, Self::BYTES);
            }

            fn decode(bytes: &[u8]) -> Self {
                assert_eq!(bytes.len(), Self::BYTES, concat!(stringify!($name), " payload size"));
                let mut at = 0;
                $(
                    let end = at + <$ty as Field>::BYTES;
                    let $field = <$ty as Field>::get(&bytes[at..end]);
                    at = end;
                )*
                debug_assert_eq!(at, Self::BYTES);
                $name { $( $field, )* }
            }
        }
    };
}

tpcc_row! {
    /// WAREHOUSE (clause 1.3.1). Primary key W_ID.
    pub struct Warehouse {
        /// W_ID: 2*W unique ids.
        pub w_id: u32,
        /// W_NAME: variable text, size 10.
        pub w_name: FixedStr<10>,
        /// W_STREET_1: variable text, size 20.
        pub w_street_1: FixedStr<20>,
        /// W_STREET_2: variable text, size 20.
        pub w_street_2: FixedStr<20>,
        /// W_CITY: variable text, size 20.
        pub w_city: FixedStr<20>,
        /// W_STATE: fixed text, size 2.
        pub w_state: FixedStr<2>,
        /// W_ZIP: fixed text, size 9.
        pub w_zip: FixedStr<9>,
        /// W_TAX: signed numeric(4,4), in ten-thousandths.
        pub w_tax: u16,
        /// W_YTD: signed numeric(12,2), in cents.
        pub w_ytd: i64,
    }
}

tpcc_row! {
    /// DISTRICT (clause 1.3.2). Primary key (D_W_ID, D_ID).
    pub struct District {
        /// D_ID: 20 unique ids (10 populated per warehouse).
        pub d_id: u8,
        /// D_W_ID: 2*W unique ids.
        pub d_w_id: u32,
        /// D_NAME: variable text, size 10.
        pub d_name: FixedStr<10>,
        /// D_STREET_1: variable text, size 20.
        pub d_street_1: FixedStr<20>,
        /// D_STREET_2: variable text, size 20.
        pub d_street_2: FixedStr<20>,
        /// D_CITY: variable text, size 20.
        pub d_city: FixedStr<20>,
        /// D_STATE: fixed text, size 2.
        pub d_state: FixedStr<2>,
        /// D_ZIP: fixed text, size 9.
        pub d_zip: FixedStr<9>,
        /// D_TAX: signed numeric(4,4), in ten-thousandths.
        pub d_tax: u16,
        /// D_YTD: signed numeric(12,2), in cents.
        pub d_ytd: i64,
        /// D_NEXT_O_ID: 10,000,000 unique ids; the next order number of this district.
        pub d_next_o_id: u32,
    }
}

tpcc_row! {
    /// CUSTOMER (clause 1.3.3). Primary key (C_W_ID, C_D_ID, C_ID).
    pub struct Customer {
        /// C_ID: 96,000 unique ids (3,000 populated per district).
        pub c_id: u32,
        /// C_D_ID: 20 unique ids.
        pub c_d_id: u8,
        /// C_W_ID: 2*W unique ids.
        pub c_w_id: u32,
        /// C_FIRST: variable text, size 16.
        pub c_first: FixedStr<16>,
        /// C_MIDDLE: fixed text, size 2.
        pub c_middle: FixedStr<2>,
        /// C_LAST: variable text, size 16.
        pub c_last: FixedStr<16>,
        /// C_STREET_1: variable text, size 20.
        pub c_street_1: FixedStr<20>,
        /// C_STREET_2: variable text, size 20.
        pub c_street_2: FixedStr<20>,
        /// C_CITY: variable text, size 20.
        pub c_city: FixedStr<20>,
        /// C_STATE: fixed text, size 2.
        pub c_state: FixedStr<2>,
        /// C_ZIP: fixed text, size 9.
        pub c_zip: FixedStr<9>,
        /// C_PHONE: fixed text, size 16.
        pub c_phone: FixedStr<16>,
        /// C_SINCE: date and time.
        pub c_since: u64,
        /// C_CREDIT: fixed text, size 2 ("GC" good, "BC" bad).
        pub c_credit: FixedStr<2>,
        /// C_CREDIT_LIM: signed numeric(12,2), in cents.
        pub c_credit_lim: i64,
        /// C_DISCOUNT: signed numeric(4,4), in ten-thousandths.
        pub c_discount: u16,
        /// C_BALANCE: signed numeric(12,2), in cents.
        pub c_balance: i64,
        /// C_YTD_PAYMENT: signed numeric(12,2), in cents.
        pub c_ytd_payment: i64,
        /// C_PAYMENT_CNT: numeric(4).
        pub c_payment_cnt: u16,
        /// C_DELIVERY_CNT: numeric(4).
        pub c_delivery_cnt: u16,
        /// C_DATA: variable text, size 500.
        pub c_data: FixedStr<500>,
    }
}

tpcc_row! {
    /// HISTORY (clause 1.3.4). No primary key: rows are only ever inserted.
    pub struct History {
        /// H_C_ID: 96,000 unique ids.
        pub h_c_id: u32,
        /// H_C_D_ID: 20 unique ids.
        pub h_c_d_id: u8,
        /// H_C_W_ID: 2*W unique ids.
        pub h_c_w_id: u32,
        /// H_D_ID: 20 unique ids.
        pub h_d_id: u8,
        /// H_W_ID: 2*W unique ids.
        pub h_w_id: u32,
        /// H_DATE: date and time.
        pub h_date: u64,
        /// H_AMOUNT: signed numeric(6,2), in cents.
        pub h_amount: i32,
        /// H_DATA: variable text, size 24.
        pub h_data: FixedStr<24>,
    }
}

tpcc_row! {
    /// NEW-ORDER (clause 1.3.5). Primary key (NO_W_ID, NO_D_ID, NO_O_ID).
    pub struct NewOrder {
        /// NO_O_ID: 10,000,000 unique ids.
        pub no_o_id: u32,
        /// NO_D_ID: 20 unique ids.
        pub no_d_id: u8,
        /// NO_W_ID: 2*W unique ids.
        pub no_w_id: u32,
    }
}

tpcc_row! {
    /// ORDER (clause 1.3.6). Primary key (O_W_ID, O_D_ID, O_ID).
    pub struct Order {
        /// O_ID: 10,000,000 unique ids.
        pub o_id: u32,
        /// O_D_ID: 20 unique ids.
        pub o_d_id: u8,
        /// O_W_ID: 2*W unique ids.
        pub o_w_id: u32,
        /// O_C_ID: 96,000 unique ids.
        pub o_c_id: u32,
        /// O_ENTRY_D: date and time.
        pub o_entry_d: u64,
        /// O_CARRIER_ID: 10 unique ids, or null (not yet delivered).
        pub o_carrier_id: Option<u8>,
        /// O_OL_CNT: numeric(2), the number of order lines (5..=15).
        pub o_ol_cnt: u8,
        /// O_ALL_LOCAL: numeric(1), 1 when every line is supplied by the home warehouse.
        pub o_all_local: u8,
    }
}

tpcc_row! {
    /// ORDER-LINE (clause 1.3.7). Primary key (OL_W_ID, OL_D_ID, OL_O_ID, OL_NUMBER).
    pub struct OrderLine {
        /// OL_O_ID: 10,000,000 unique ids.
        pub ol_o_id: u32,
        /// OL_D_ID: 20 unique ids.
        pub ol_d_id: u8,
        /// OL_W_ID: 2*W unique ids.
        pub ol_w_id: u32,
        /// OL_NUMBER: 15 unique ids.
        pub ol_number: u8,
        /// OL_I_ID: 200,000 unique ids.
        pub ol_i_id: u32,
        /// OL_SUPPLY_W_ID: 2*W unique ids.
        pub ol_supply_w_id: u32,
        /// OL_DELIVERY_D: date and time, or null (not yet delivered).
        pub ol_delivery_d: Option<u64>,
        /// OL_QUANTITY: numeric(2).
        pub ol_quantity: u8,
        /// OL_AMOUNT: signed numeric(6,2), in cents.
        pub ol_amount: i32,
        /// OL_DIST_INFO: fixed text, size 24.
        pub ol_dist_info: FixedStr<24>,
    }
}

tpcc_row! {
    /// ITEM (clause 1.3.8). Primary key I_ID.
    pub struct Item {
        /// I_ID: 200,000 unique ids (100,000 populated).
        pub i_id: u32,
        /// I_IM_ID: 200,000 unique ids (image id).
        pub i_im_id: u32,
        /// I_NAME: variable text, size 24.
        pub i_name: FixedStr<24>,
        /// I_PRICE: numeric(5,2), in cents.
        pub i_price: i32,
        /// I_DATA: variable text, size 50.
        pub i_data: FixedStr<50>,
    }
}

tpcc_row! {
    /// STOCK (clause 1.3.9). Primary key (S_W_ID, S_I_ID).
    pub struct Stock {
        /// S_I_ID: 200,000 unique ids (100,000 populated per warehouse).
        pub s_i_id: u32,
        /// S_W_ID: 2*W unique ids.
        pub s_w_id: u32,
        /// S_QUANTITY: signed numeric(4).
        pub s_quantity: i16,
        /// S_DIST_01..S_DIST_10: fixed text, size 24 each (one per district).
        pub s_dist_01: FixedStr<24>,
        /// S_DIST_02.
        pub s_dist_02: FixedStr<24>,
        /// S_DIST_03.
        pub s_dist_03: FixedStr<24>,
        /// S_DIST_04.
        pub s_dist_04: FixedStr<24>,
        /// S_DIST_05.
        pub s_dist_05: FixedStr<24>,
        /// S_DIST_06.
        pub s_dist_06: FixedStr<24>,
        /// S_DIST_07.
        pub s_dist_07: FixedStr<24>,
        /// S_DIST_08.
        pub s_dist_08: FixedStr<24>,
        /// S_DIST_09.
        pub s_dist_09: FixedStr<24>,
        /// S_DIST_10.
        pub s_dist_10: FixedStr<24>,
        /// S_YTD: numeric(8).
        pub s_ytd: u32,
        /// S_ORDER_CNT: numeric(4).
        pub s_order_cnt: u16,
        /// S_REMOTE_CNT: numeric(4).
        pub s_remote_cnt: u16,
        /// S_DATA: variable text, size 50.
        pub s_data: FixedStr<50>,
    }
}

impl Stock {
    /// S_DIST_xx for district `d` (1..=10), the text New-Order copies into OL_DIST_INFO.
    pub fn dist_info(&self, d: u8) -> &FixedStr<24> {
        match d {
            1 => &self.s_dist_01,
            2 => &self.s_dist_02,
            3 => &self.s_dist_03,
            4 => &self.s_dist_04,
            5 => &self.s_dist_05,
            6 => &self.s_dist_06,
            7 => &self.s_dist_07,
            8 => &self.s_dist_08,
            9 => &self.s_dist_09,
            10 => &self.s_dist_10,
            _ => panic!("district id {d} outside 1..=10"),
        }
    }

    /// Mutable S_DIST_xx for district `d` (1..=10).
    pub fn dist_info_mut(&mut self, d: u8) -> &mut FixedStr<24> {
        match d {
            1 => &mut self.s_dist_01,
            2 => &mut self.s_dist_02,
            3 => &mut self.s_dist_03,
            4 => &mut self.s_dist_04,
            5 => &mut self.s_dist_05,
            6 => &mut self.s_dist_06,
            7 => &mut self.s_dist_07,
            8 => &mut self.s_dist_08,
            9 => &mut self.s_dist_09,
            10 => &mut self.s_dist_10,
            _ => panic!("district id {d} outside 1..=10"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<R: Row + PartialEq + std::fmt::Debug>(row: &R) {
        let mut buf = vec![0xAAu8; R::BYTES];
        row.encode(&mut buf);
        assert_eq!(&R::decode(&buf), row);
    }

    fn text<const N: usize>(fill: u8) -> FixedStr<N> {
        FixedStr::new(&vec![fill; N])
    }

    #[test]
    fn payload_sizes_are_the_sum_of_the_fields() {
        assert_eq!(Warehouse::BYTES, 4 + 10 + 20 * 3 + 2 + 9 + 2 + 8);
        assert_eq!(District::BYTES, 1 + 4 + 10 + 20 * 3 + 2 + 9 + 2 + 8 + 4);
        assert_eq!(NewOrder::BYTES, 9);
        assert_eq!(Order::BYTES, 4 + 1 + 4 + 4 + 8 + 1 + 1 + 1);
        assert_eq!(
            OrderLine::BYTES,
            55,
            "one cache line with 8 bytes of metadata"
        );
        assert_eq!(Item::BYTES, 4 + 4 + 24 + 4 + 50);
        assert_eq!(Stock::BYTES, 308);
        assert_eq!(History::BYTES, 4 + 1 + 4 + 1 + 4 + 8 + 4 + 24);
        assert_eq!(Customer::BYTES, 670);
    }

    #[test]
    fn every_row_round_trips_with_full_width_fields() {
        round_trip(&Warehouse {
            w_id: u32::MAX,
            w_name: text(b'n'),
            w_street_1: text(b'a'),
            w_street_2: text(b'b'),
            w_city: text(b'c'),
            w_state: text(b's'),
            w_zip: text(b'9'),
            w_tax: 2000,
            w_ytd: -123_456_789_012,
        });
        round_trip(&District {
            d_id: 10,
            d_w_id: 7,
            d_name: FixedStr::new(b"dist"),
            d_street_1: text(b'a'),
            d_street_2: FixedStr::new(b""),
            d_city: text(b'c'),
            d_state: text(b'S'),
            d_zip: FixedStr::new(b"123411111"),
            d_tax: 1999,
            d_ytd: 3_000_000,
            d_next_o_id: 3001,
        });
        round_trip(&Customer {
            c_id: 3000,
            c_d_id: 10,
            c_w_id: 1,
            c_first: text(b'f'),
            c_middle: FixedStr::new(b"OE"),
            c_last: FixedStr::new(b"BARBARBAR"),
            c_street_1: text(b'1'),
            c_street_2: text(b'2'),
            c_city: text(b'c'),
            c_state: text(b's'),
            c_zip: text(b'z'),
            c_phone: text(b'7'),
            c_since: 1_700_000_000,
            c_credit: FixedStr::new(b"BC"),
            c_credit_lim: 5_000_000,
            c_discount: 5000,
            c_balance: -1000,
            c_ytd_payment: 1000,
            c_payment_cnt: 1,
            c_delivery_cnt: 9999,
            c_data: text(b'd'),
        });
        round_trip(&History {
            h_c_id: 1,
            h_c_d_id: 2,
            h_c_w_id: 3,
            h_d_id: 4,
            h_w_id: 5,
            h_date: 6,
            h_amount: -999_999,
            h_data: text(b'h'),
        });
        round_trip(&NewOrder {
            no_o_id: 10_000_000,
            no_d_id: 20,
            no_w_id: 2,
        });
        for carrier in [None, Some(1), Some(10)] {
            round_trip(&Order {
                o_id: 2101,
                o_d_id: 3,
                o_w_id: 4,
                o_c_id: 96_000,
                o_entry_d: u64::MAX,
                o_carrier_id: carrier,
                o_ol_cnt: 15,
                o_all_local: 1,
            });
        }
        for delivery in [None, Some(1), Some(u64::MAX)] {
            round_trip(&OrderLine {
                ol_o_id: 1,
                ol_d_id: 1,
                ol_w_id: 1,
                ol_number: 15,
                ol_i_id: 200_000,
                ol_supply_w_id: 2,
                ol_delivery_d: delivery,
                ol_quantity: 99,
                ol_amount: 999_999,
                ol_dist_info: text(b'i'),
            });
        }
        round_trip(&Item {
            i_id: 100_000,
            i_im_id: 10_000,
            i_name: text(b'n'),
            i_price: 10_000,
            i_data: FixedStr::new(b"xxORIGINALyy"),
        });
        let mut stock = Stock {
            s_i_id: 5,
            s_w_id: 6,
            s_quantity: -91,
            s_ytd: 99_999_999,
            s_order_cnt: 9999,
            s_remote_cnt: 1,
            s_data: text(b'd'),
            ..Stock::default()
        };
        for d in 1..=10u8 {
            *stock.dist_info_mut(d) = text(b'a' + d);
        }
        round_trip(&stock);
        assert_eq!(stock.dist_info(3), &text(b'd'));
    }

    #[test]
    fn fields_sit_at_fixed_offsets() {
        // W_ID is the first four bytes, W_YTD the last eight, little-endian.
        let w = Warehouse {
            w_id: 0x0403_0201,
            w_ytd: 0x0807_0605_0403_0201,
            ..Warehouse::default()
        };
        let mut buf = vec![0u8; Warehouse::BYTES];
        w.encode(&mut buf);
        assert_eq!(&buf[..4], &[1, 2, 3, 4]);
        assert_eq!(&buf[Warehouse::BYTES - 8..], &[1, 2, 3, 4, 5, 6, 7, 8]);
    }

    #[test]
    fn fixed_str_trims_padding() {
        let s: FixedStr<8> = FixedStr::new(b"abc");
        assert_eq!(s.as_bytes(), b"abc");
        assert_eq!(s.len(), 3);
        assert!(!s.is_empty());
        assert!(FixedStr::<8>::default().is_empty());
        let full: FixedStr<3> = FixedStr::new(b"xyz");
        assert_eq!(full.as_bytes(), b"xyz");
        assert_eq!(format!("{s:?}"), "\"abc\"");
    }

    #[test]
    #[should_panic(expected = "field of 2")]
    fn fixed_str_rejects_overlong_text() {
        let _ = FixedStr::<2>::new(b"abc");
    }
}
