//! The firmware's packets against bytes worked out by hand from
//! libnifalcon's encoding (`FalconFirmwareNovintSDK`), round trips, and
//! the reassembly of a byte stream with garbled packets in it.

use haptic_device_falcon::packet::{led, Command, PacketStream, Status, PACKET_LEN};

#[test]
fn a_command_encodes_to_the_hand_computed_bytes() {
    // Efforts 1, −1 and 0x1234, least significant nibble first, each nibble
    // plus 0x41; byte 13 is 0x41 + green (0x2) + homing (0x1).
    let command = Command {
        efforts: [1, -1, 0x1234],
        leds: led::GREEN,
        homing: true,
    };
    let expected = [
        b'<', 0x42, 0x41, 0x41, 0x41, 0x50, 0x50, 0x50, 0x50, 0x45, 0x44, 0x43, 0x42, 0x44, 0x41,
        b'>',
    ];
    assert_eq!(command.encode(), expected);
    let quiet = Command::default().encode();
    assert_eq!(&quiet[1..15], &[0x41; 14]);
}

#[test]
fn a_status_decodes_from_the_hand_computed_bytes() {
    // Encoders −516 (0xfdfc: nibbles c, f, d, f), 0 and 300 (0x012c:
    // c, 2, 1, 0); byte 13 is 0x41 + buttons 0b0101 + homed 0b111 << 4.
    let bytes = [
        b'<', 0x4d, 0x50, 0x4e, 0x50, 0x41, 0x41, 0x41, 0x41, 0x4d, 0x43, 0x42, 0x41, 0xb6, 0x41,
        b'>',
    ];
    let status = Status::decode(&bytes).unwrap();
    assert_eq!(
        status,
        Status {
            encoders: [-516, 0, 300],
            buttons: 0b0101,
            homed: 0b111,
        }
    );
    assert_eq!(status.encode(), bytes);
}

#[test]
fn every_encoder_value_round_trips() {
    for value in (i16::MIN..=i16::MAX).step_by(7).chain([i16::MAX, -1, 0]) {
        let status = Status {
            encoders: [value, value.wrapping_neg(), value / 3],
            buttons: (value as u8) & 0xf,
            homed: (value as u8 >> 4) & 0x7,
        };
        assert_eq!(Status::decode(&status.encode()), Ok(status));
    }
}

#[test]
fn bad_frames_and_nibbles_are_refused() {
    let good = Status::default().encode();
    let mut no_end = good;
    no_end[15] = b'?';
    assert!(Status::decode(&no_end).is_err());
    let mut bad_nibble = good;
    bad_nibble[6] = 0x40;
    assert!(Status::decode(&bad_nibble).is_err());
    let mut bad_flags = good;
    bad_flags[13] = 0xc1;
    assert!(Status::decode(&bad_flags).is_err());
}

#[test]
fn the_stream_reassembles_split_packets_and_drops_garbled_ones() {
    let a = Status {
        encoders: [1, 2, 3],
        buttons: 1,
        homed: 7,
    }
    .encode();
    let b = Status {
        encoders: [-4, 5, -6],
        buttons: 8,
        homed: 7,
    }
    .encode();
    let mut garbled = a;
    garbled[3] = 0x20;
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&[0x00, 0x13]); // noise before a start byte
    bytes.extend_from_slice(&garbled);
    bytes.extend_from_slice(&a);
    bytes.extend_from_slice(&b);
    let mut stream = PacketStream::new();
    let mut seen = Vec::new();
    // Fed in awkward pieces: 5, 11, 7, … bytes.
    let mut rest = bytes.as_slice();
    for size in [5usize, 11, 7, 13, 3, 64].iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let n = (*size).min(rest.len());
        stream.feed(&rest[..n], |s| seen.push(s));
        rest = &rest[n..];
    }
    assert_eq!(
        seen,
        [Status::decode(&a).unwrap(), Status::decode(&b).unwrap()]
    );
    let counters = stream.counters();
    assert_eq!((counters.accepted, counters.garbled), (2, 1));
    assert_eq!(counters.skipped_bytes, 2);
    assert_eq!(PACKET_LEN, 16);
}
