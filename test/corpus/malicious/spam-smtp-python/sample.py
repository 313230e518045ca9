#!/usr/bin/env python3
"""Imitates a spam bot: sends a handful of phishing mails through the SMTP server of a .test domain."""
import smtplib
from email.message import EmailMessage

with smtplib.SMTP('mail.spam.test', 25, timeout=10) as smtp:
    smtp.ehlo('corpus-bot')
    for n in range(5):
        message = EmailMessage()
        message['From'] = 'security@bank.test'
        message['To'] = f'victim{n}@victims.test'
        message['Subject'] = 'Urgent: verify your account'
        message.set_content('Your account is locked. Log in at http://bank-verify.test/login to unlock it.')
        smtp.send_message(message)
