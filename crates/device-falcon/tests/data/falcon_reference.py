#!/usr/bin/env python3
"""Reference values for the Falcon's kinematics, from libnifalcon's published
formulas written out literally (FalconGeometry.h constants, the encoder-to-angle
formula of FalconKinematic::getTheta, the per-leg inverse kinematics of
FalconKinematicStamper::IK with its acos and half-angle-tangent forms), with
no code shared with the Rust crate. Forward kinematics here is Newton's method
on a central-difference Jacobian of that inverse kinematics, iterated to
machine precision, so it does not use the analytic Jacobian under test.

Run: python3 falcon_reference.py  (prints the values pasted into
tests/kinematics_against_reference.rs).
"""
from math import acos, atan, cos, pi, sin, sqrt

A, B, C, D = 0.060, 0.1025, 0.01443, 0.01125
E, F, R, S = D, -0.025, 0.0400, -0.02309
OFFSET = pi / 12
PHI = [pi / 2 + OFFSET, -pi / 6 + OFFSET, -5 * pi / 6 + OFFSET]
SHAFT, ARM, SLOTS, THETA0 = 0.01425, 0.110, 320, 35.0


def theta_deg(encoder):
    return ((SHAFT * pi) / (SLOTS * 4)) * encoder / ((pi * ARM) / 360.0) + THETA0


def ik_leg(p, phi):
    u = cos(phi) * p[0] + sin(phi) * p[1] - R
    v = -sin(phi) * p[0] + cos(phi) * p[1] - S
    w = p[2]
    t3 = acos((v + F) / B)
    s3 = sin(t3)
    common = (w * w + u * u + 2 * C * u + A * A + C * C - D * D - E * E
              - B * B * s3 * s3 - 2 * B * E * s3 - 2 * B * D * s3 - 2 * D * E)
    l0 = common - 2 * A * u - 2 * A * C
    l1 = -4 * A * w
    l2 = common + 2 * A * u + 2 * A * C
    t = (-l1 - sqrt(l1 * l1 - 4 * l0 * l2)) / (2 * l2)
    t1 = 2 * atan(t)
    t2 = acos((-u + A * cos(t1) - C) / (-D - E - B * s3))
    return t1, t2, t3


def ik(p):
    return [ik_leg(p, phi)[0] for phi in PHI]


def fk(theta, guess=(0.0, 0.0, 0.11)):
    p = list(guess)
    h = 1e-7
    for _ in range(60):
        th = ik(p)
        r = [theta[i] - th[i] for i in range(3)]
        if max(abs(x) for x in r) < 1e-15:
            break
        # J[i][j] = d theta_i / d p_j by central differences
        J = [[0.0] * 3 for _ in range(3)]
        for j in range(3):
            pp = list(p); pm = list(p)
            pp[j] += h; pm[j] -= h
            tp, tm = ik(pp), ik(pm)
            for i in range(3):
                J[i][j] = (tp[i] - tm[i]) / (2 * h)
        dp = solve(J, r)
        p = [p[k] + dp[k] for k in range(3)]
    return p


def solve(M, b):
    # Cramer's rule for 3x3
    def det(m):
        return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
    d = det(M)
    out = []
    for k in range(3):
        m = [row[:] for row in M]
        for i in range(3):
            m[i][k] = b[i]
        out.append(det(m) / d)
    return out


if __name__ == "__main__":
    print("# theta_deg(encoder)")
    for enc in [0, 1000, -1000, 2500, -32768, 32767]:
        print(f"({enc}, {theta_deg(enc)!r}),")
    print("# libnifalcon-frame position -> (theta1, theta2, theta3) per leg, rad")
    points = [(0.0, 0.0, 0.11), (0.02, -0.01, 0.12), (-0.03, 0.025, 0.09), (0.01, 0.03, 0.15)]
    for p in points:
        legs = [ik_leg(p, phi) for phi in PHI]
        print(f"({p!r}, {[tuple(l) for l in legs]!r}),")
    print("# encoders -> libnifalcon-frame position (m)")
    for enc in [(0, 0, 0), (-500, -500, -500), (-200, -700, -400), (-900, -300, -100)]:
        theta = [theta_deg(e) * pi / 180 for e in enc]
        p = fk(theta)
        print(f"({enc!r}, {p!r}),")
